/**
 * The logger every component receives by injection (docs/contributing.md#config-and-logs): a
 * constant message plus structured fields, never a module-global. The winston implementation is an
 * adapter in `@cloudmap-mcs/core/runtime` (`createLogger`); tests use `createMemoryLogger`
 * from `@cloudmap-mcs/core/testing`.
 */

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export const logLevels: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** Field values; an `Error` is serialized with its name, message, code and cause chain. */
export type LogFieldValues = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFieldValues): void;
  warn(message: string, fields?: LogFieldValues): void;
  info(message: string, fields?: LogFieldValues): void;
  debug(message: string, fields?: LogFieldValues): void;
  /** A logger that adds `fields` to every entry (e.g. `{controller, key, reconcileId}`). */
  child(fields: LogFieldValues): Logger;
}

/** Discards everything; for code paths where logging is optional. */
export const noopLogger: Logger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  child: () => noopLogger,
};

/** Serializes an error (and its `cause` chain, up to a depth) for a log field. */
export function serializeError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  for (const key of ['code', 'operation', 'retryable', 'statusCode'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  if (error.cause !== undefined && depth < 4) out['cause'] = serializeError(error.cause, depth + 1);
  return out;
}
