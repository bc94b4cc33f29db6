// Kubernetes and process adapters: `@cloudmap-mcs/core/runtime`.
export * from './logger.js';
