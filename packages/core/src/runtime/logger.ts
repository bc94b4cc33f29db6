import winston from 'winston';
import {
  serializeError,
  type LogFieldValues,
  type LogLevel,
  type Logger,
} from '../logging/logger.js';

export interface LoggerOptions {
  level: LogLevel;
  /** `json` (default, one object per line) or `text` for humans at a terminal. */
  format?: 'json' | 'text';
  /** Fields on every entry, e.g. `{agent: 'export-agent'}`. */
  defaultFields?: LogFieldValues;
  /** Where to write; stdout by default. Tests pass a stream to capture output. */
  stream?: NodeJS.WritableStream;
}

const serializeFields = (fields: LogFieldValues): LogFieldValues => {
  const out: LogFieldValues = {};
  for (const [k, v] of Object.entries(fields)) out[k] = serializeError(v);
  return out;
};

const wrap = (w: winston.Logger): Logger => {
  const log =
    (level: LogLevel) =>
    (message: string, fields?: LogFieldValues): void => {
      if (!w.isLevelEnabled(level)) return;
      w.log(level, message, fields === undefined ? {} : serializeFields(fields));
    };
  return {
    error: log('error'),
    warn: log('warn'),
    info: log('info'),
    debug: log('debug'),
    child: (fields) => wrap(w.child(serializeFields(fields))),
  };
};

/** The winston-backed Logger; build one in main.ts and pass it down. */
export function createLogger(options: LoggerOptions): Logger {
  const format =
    options.format === 'text'
      ? winston.format.combine(
          winston.format.timestamp(),
          winston.format.printf(({ level, message, timestamp, ...rest }) => {
            const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
            return `${String(timestamp)} ${level} ${String(message)}${fields}`;
          }),
        )
      : winston.format.combine(winston.format.timestamp(), winston.format.json());
  const transport =
    options.stream === undefined
      ? new winston.transports.Console()
      : new winston.transports.Stream({ stream: options.stream });
  const w = winston.createLogger({
    level: options.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    format,
    defaultMeta:
      options.defaultFields === undefined ? undefined : serializeFields(options.defaultFields),
    transports: [transport],
  });
  return wrap(w);
}
