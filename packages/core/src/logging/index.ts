export * from './logger.js';
export * from './log-fields.js';
