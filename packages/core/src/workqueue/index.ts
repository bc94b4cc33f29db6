export * from './clock.js';
export * from './rate-limiter.js';
export * from './queue.js';
export * from './controller.js';
export * from './metrics.js';
export * from './backoff.js';
export * from './watches.js';
export * from './queue-metrics.js';
