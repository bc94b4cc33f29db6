import {
  serializeError,
  type LogFieldValues,
  type LogLevel,
  type Logger,
} from '../logging/logger.js';

export interface LogEntry {
  level: LogLevel;
  message: string;
  fields: LogFieldValues;
}

/** A logger that records entries, for asserting what was logged (and that secrets were not). */
export interface MemoryLogger extends Logger {
  readonly entries: LogEntry[];
  /** Entries whose message equals `message`. */
  find(message: string): LogEntry[];
  clear(): void;
}

export function createMemoryLogger(): MemoryLogger {
  const entries: LogEntry[] = [];
  const make = (base: LogFieldValues): Logger => {
    const log =
      (level: LogLevel) =>
      (message: string, fields: LogFieldValues = {}): void => {
        const merged: LogFieldValues = { ...base };
        for (const [k, v] of Object.entries(fields)) merged[k] = serializeError(v);
        entries.push({ level, message, fields: merged });
      };
    return {
      error: log('error'),
      warn: log('warn'),
      info: log('info'),
      debug: log('debug'),
      child: (fields) => make({ ...base, ...fields }),
    };
  };
  return {
    ...make({}),
    entries,
    find: (message) => entries.filter((e) => e.message === message),
    clear: () => void entries.splice(0),
  };
}
