import Bottleneck from 'bottleneck';
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
 * Per-agent defaults, well under Cloud Map's account-wide quotas (reference/cloudmap-api.md §6)
 * because every cluster of the clusterset shares one account's budget: DiscoverInstances
 * 1,000/s and DiscoverInstancesRevision 3,000/s are documented; control-plane rates are not,
 * the community figure for ListInstances is ~50/s, and the AWS controller's own client limits
 * (ListNamespaces 0.5/s, CreateService 5/s, RegisterInstance 50/s) are the ceiling here.
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

/**
 * The same limits on bottleneck (opt-in through the client's `limiter` option; the default is
 * `createTokenBucketLimiter`, see ADR 0005 for the measured overhead of bottleneck). A token
 * bucket per operation on bottleneck: a reservoir of `burst` tokens refilled at
 * `perSecond`. Refills happen every `interval` ms in whole tokens, so slow rates (0.5/s)
 * refill one token every 2 s and fast ones (300/s) 30 tokens every 100 ms.
 */
export function bottleneckSettings(limit: RateLimit): Bottleneck.ConstructorOptions {
  if (!(limit.perSecond > 0) || !(limit.burst >= 1))
    throw new RangeError(`invalid rate limit ${JSON.stringify(limit)}`);
  const interval = Math.max(100, Math.ceil(1000 / limit.perSecond));
  const amount = Math.max(1, Math.round((limit.perSecond * interval) / 1000));
  return {
    reservoir: limit.burst,
    reservoirIncreaseAmount: amount,
    reservoirIncreaseInterval: interval,
    reservoirIncreaseMaximum: limit.burst,
    maxConcurrent: limit.maxConcurrent ?? null,
  };
}

export function createBottleneckLimiter(
  overrides: Partial<Record<CloudMapOperationName, RateLimit>> = {},
): OperationLimiter {
  const limiters = new Map<CloudMapOperationName, Bottleneck>();
  const get = (op: CloudMapOperationName): Bottleneck => {
    let l = limiters.get(op);
    if (l === undefined) {
      l = new Bottleneck(bottleneckSettings(overrides[op] ?? defaultRateLimits[op]));
      limiters.set(op, l);
    }
    return l;
  };
  return {
    schedule: (op, fn) => get(op).schedule(fn),
    queued: (op) => limiters.get(op)?.queued() ?? 0,
    stop: async () => {
      await Promise.all([...limiters.values()].map((l) => l.stop({ dropWaitingJobs: true })));
      limiters.clear();
    },
  };
}

/** No limits at all; for tests of layers above the limiter. */
export const unlimited: OperationLimiter = {
  schedule: (_op, fn) => fn(),
  queued: () => 0,
  stop: async () => {},
};
