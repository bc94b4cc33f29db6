export * from './cloudmap-port.js';
export * from './operations.js';
export * from './cloudmap-limits.js';
export * from './events.js';
export * from './managed-tags.js';
