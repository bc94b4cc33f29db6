export * from './types.js';
export * from './identity.js';
