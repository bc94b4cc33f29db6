export * from './api.js';
export * from './conditions.js';
export * from './objects.js';
