// Kubernetes and process adapters: `@cloudmap-mcs/core/runtime`.
export * from './health.js';
export * from './informer.js';
export * from './kube-informer.js';
export * from './leader-election.js';
export * from './lease-store.js';
export * from './logger.js';
export * from './shutdown.js';
export * from './cluster-identity.js';
export * from './api-errors.js';
export * from './events.js';
export * from './kubeconfig.js';
