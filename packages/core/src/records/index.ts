// The Cloud Map record codec (docs/cloudmap-schema.md): pure, no I/O.
export * from './attributes.js';
export * from './ids.js';
export * from './json-attr.js';
export * from './limits.js';
export * from './encode.js';
export * from './decode.js';
export { RecordParseError } from './parse.js';
export * from './feed.js';
export * from './export-plan.js';
export * from './shards.js';
export * from './shard-plan.js';
