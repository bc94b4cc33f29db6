// Library API of the CLI (used by the demo): the commands and their pure parts.
export * from './commands.js';
export { readClustersetRecords, type ClustersetRecords } from './cloudmap/records.js';
export { identityFromProperties } from './identity.js';
export { createKubeReader, loadKubeConfig, type KubeReader } from './kube/reader.js';
export type { CheckResult } from './doctor/result.js';
export { runDoctor } from './doctor/run.js';
export { buildStatusReport } from './status/build.js';
export { collectStatus } from './status/collect.js';
export type { StatusReport } from './status/report.js';
export { renderStatus } from './status/render.js';
export { renderDoctor } from './doctor/render.js';
