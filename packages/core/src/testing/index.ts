// Test doubles shared by both agents' tests: `@cloudmap-mcs/core/testing`.
export * from './faults.js';
export * from './fake-cloudmap.js';
export * from './memory-logger.js';
export * from './memory-events.js';
export * from './drain.js';
export * from './fake-clock.js';
export * from './unlimited.js';
