// The same per-operation limits on bottleneck, kept only to measure it against our token bucket
// (ADR 0005: bottleneck 2.19.5 tops out far below the rates we configure, so production uses
// createTokenBucketLimiter). Bench code, not shipped.
import Bottleneck from 'bottleneck';
import {
  defaultRateLimits,
  type OperationLimiter,
  type RateLimit,
} from '../../src/cloudmap/rate-limits.js';
import type { CloudMapOperationName } from '../../src/ports/operations.js';

/**
 * A token bucket per operation on bottleneck: a reservoir of `burst` tokens refilled at
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
