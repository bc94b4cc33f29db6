export * from './logger.js';
export * from './log-fields.js';
export * from './refusal-log.js';
