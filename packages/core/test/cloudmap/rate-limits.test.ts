import { describe, expect, it } from 'vitest';
import {
  bottleneckSettings,
  createBottleneckLimiter,
  defaultRateLimits,
} from '../../src/cloudmap/rate-limits.js';
import { cloudMapOperations } from '../../src/ports/operations.js';

describe('rate limits', () => {
  it.each([
    [
      { perSecond: 0.5, burst: 5 },
      { reservoir: 5, reservoirIncreaseAmount: 1, reservoirIncreaseInterval: 2000 },
    ],
    [
      { perSecond: 20, burst: 40 },
      { reservoir: 40, reservoirIncreaseAmount: 2, reservoirIncreaseInterval: 100 },
    ],
    [
      { perSecond: 300, burst: 600 },
      { reservoir: 600, reservoirIncreaseAmount: 30, reservoirIncreaseInterval: 100 },
    ],
  ])('%j refills at the configured rate: %j', (limit, expected) => {
    const s = bottleneckSettings(limit);
    expect(s).toMatchObject({ ...expected, reservoirIncreaseMaximum: limit.burst });
    const perSecond =
      ((s.reservoirIncreaseAmount ?? 0) * 1000) / (s.reservoirIncreaseInterval ?? 1);
    expect(perSecond).toBeCloseTo(limit.perSecond, 5);
  });

  it('defaults cover every operation and stay under the documented account quotas', () => {
    for (const op of cloudMapOperations) expect(defaultRateLimits[op]).toBeDefined();
    expect(defaultRateLimits.discoverInstances.perSecond).toBeLessThanOrEqual(1000 / 4);
    expect(defaultRateLimits.discoverInstancesRevision.perSecond).toBeLessThanOrEqual(3000 / 4);
    expect(defaultRateLimits.listInstances.perSecond).toBeLessThan(50);
  });

  it('rejects a non-positive rate', () => {
    expect(() => bottleneckSettings({ perSecond: 0, burst: 1 })).toThrow(RangeError);
  });

  it('lets a burst through and holds the rest until tokens refill', async () => {
    // One token per 1000 s: after the burst nothing else can start during this test.
    const limiter = createBottleneckLimiter({ listInstances: { perSecond: 0.001, burst: 3 } });
    let started = 0;
    const calls = Array.from({ length: 5 }, () =>
      limiter.schedule('listInstances', async () => {
        started += 1;
      }),
    );
    await Promise.all(calls.slice(0, 3));
    await new Promise((r) => setTimeout(r, 50));
    expect(started).toBe(3);
    expect(limiter.queued('listInstances')).toBe(2);
    // Other operations have their own buckets.
    await limiter.schedule('listNamespaces', async () => {});
    await limiter.stop();
    await Promise.allSettled(calls);
  });
});
