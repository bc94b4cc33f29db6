// Import-side planners (pure). The export side's planners live next to them.
export * from './address-policy.js';
export * from './liveness.js';
export * from './merge.js';
export * from './naming.js';
export * from './ordering.js';
export * from './slices.js';
export * from './trust.js';
export * from './conflicts.js';
export * from './local-addresses.js';
export * from './feed.js';
