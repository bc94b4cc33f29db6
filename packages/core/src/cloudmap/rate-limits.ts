import type { CloudMapOperationName } from '../ports/operations.js';

export interface RateLimit {
  /** Sustained calls per second. */
  perSecond: number;
  /** Calls allowed at once after an idle period (token bucket size). */
  burst: number;
  /** Calls in flight at once; unlimited when absent. */
  maxConcurrent?: number;
}

/**
 * Per-agent defaults, well under Cloud Map's account-wide quotas
 * (docs/architecture.md#cloud-map-facts) because every cluster of the clusterset shares one
 * account's budget: DiscoverInstances 1,000/s and DiscoverInstancesRevision 3,000/s are documented;
 * control-plane rates are not, the community figure for ListInstances is ~50/s, and the AWS
 * controller's own client limits (ListNamespaces 0.5/s, CreateService 5/s, RegisterInstance 50/s)
 * are the ceiling here.
 */
export const defaultRateLimits: Readonly<Record<CloudMapOperationName, RateLimit>> = {
  listNamespaces: { perSecond: 0.5, burst: 5 },
  createHttpNamespace: { perSecond: 0.2, burst: 2 },
  createPrivateDnsNamespace: { perSecond: 0.2, burst: 2 },
  listServices: { perSecond: 2, burst: 10 },
  createService: { perSecond: 2, burst: 10 },
  deleteService: { perSecond: 2, burst: 10 },
  listInstances: { perSecond: 10, burst: 20 },
  discoverInstances: { perSecond: 100, burst: 200, maxConcurrent: 16 },
  discoverInstancesRevision: { perSecond: 300, burst: 600, maxConcurrent: 32 },
  registerInstance: { perSecond: 20, burst: 40 },
  deregisterInstance: { perSecond: 20, burst: 40 },
  getOperation: { perSecond: 20, burst: 40 },
};

/** Schedules calls of each operation under its limit. */
export interface OperationLimiter {
  schedule<T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T>;
  /** Calls waiting for a token, per operation (for metrics and tests). */
  queued(op: CloudMapOperationName): number;
  stop(): Promise<void>;
}
