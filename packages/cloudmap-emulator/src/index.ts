export {
  startEmulator,
  type EmulatorOptions,
  type GatewayInfo,
  type RunningEmulator,
} from './server.js';
export { LocalCa } from './gateway/ca.js';
export { INTERCEPTED_HOST } from './gateway/proxy.js';
export { EmulatorAdminClient, EmulatorAdminError } from './admin-client.js';
export type { EmulatorConfig, EmulatorConfigPatch } from './admin-types.js';
export type { FaultConfig, FaultShare, OperationFault, RateLimit } from './faults.js';
export { AWS_RATE_LIMITS } from './faults.js';
export type { StatsSnapshot, OperationStats } from './stats.js';
export type { EmulatorState, Quotas } from './model.js';
export { DEFAULT_QUOTAS } from './model.js';
export { HANDLERS, WRITE_OPERATIONS } from './handlers/index.js';
export { StateFileError } from './persistence.js';
export type { DnsServerInfo } from './dns/server.js';
