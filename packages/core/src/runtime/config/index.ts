export * from './cli.js';
export * from './common.js';
export * from './redact.js';
