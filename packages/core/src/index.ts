// Pure core: the domain model, planners and the work queue. Nothing here may import
// @kubernetes/client-node or @aws-sdk/* (enforced by eslint.config.js); adapters live in
// ./runtime and ./cloudmap.
export * from './model/index.js';
export * from './ports/index.js';
export * from './workqueue/index.js';
export * from './logging/index.js';
export * from './records/index.js';
export * from './planning/index.js';
export * from './kube/index.js';
export * from './feed/follower.js';
