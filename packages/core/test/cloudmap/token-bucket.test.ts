import { describe, expect, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createTokenBucketLimiter, LimiterStoppedError } from '../../src/cloudmap/token-bucket.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';
import { advance, settle } from '../helpers/async.js';
import { FakeClock } from '../../src/testing/index.js';

describe('token bucket limiter (fake time)', () => {
  it('lets the burst through at once, then one call per 1/rate, in order', async () => {
    const clock = new FakeClock();
    const limiter = createTokenBucketLimiter(
      { registerInstance: { perSecond: 2, burst: 3 } },
      clock,
    );
    const started: [number, number][] = [];
    const calls = Array.from({ length: 6 }, (_, i) =>
      limiter.schedule('registerInstance', async () => void started.push([i, clock.now()])),
    );
    await settle();
    expect(started).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    expect(limiter.queued('registerInstance')).toBe(3);
    await advance(clock, 1_500, 100);
    await Promise.all(calls);
    expect(started.slice(3)).toEqual([
      [3, 500],
      [4, 1000],
      [5, 1500],
    ]);
  });

  it('refills up to the burst only, and operations have separate buckets', async () => {
    const clock = new FakeClock();
    const limiter = createTokenBucketLimiter({ listInstances: { perSecond: 10, burst: 2 } }, clock);
    clock.advance(60_000); // idle for a minute: still only `burst` tokens
    let n = 0;
    for (let i = 0; i < 3; i++) void limiter.schedule('listInstances', async () => void (n += 1));
    await limiter.schedule('listNamespaces', async () => {});
    await settle();
    expect(n).toBe(2);
    await advance(clock, 100, 100);
    expect(n).toBe(3);
  });

  it('caps concurrency and starts the next call when one finishes', async () => {
    const clock = new FakeClock();
    const limiter = createTokenBucketLimiter(
      { discoverInstances: { perSecond: 1000, burst: 1000, maxConcurrent: 2 } },
      clock,
    );
    const releases: (() => void)[] = [];
    let running = 0;
    let maxRunning = 0;
    const calls = Array.from({ length: 5 }, () =>
      limiter.schedule('discoverInstances', async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise<void>((r) => releases.push(r));
        running -= 1;
      }),
    );
    for (let i = 0; i < 5; i++) {
      await settle();
      releases.shift()?.();
    }
    await Promise.all(calls);
    expect(maxRunning).toBe(2);
  });

  it('stop rejects what is still queued', async () => {
    const clock = new FakeClock();
    const limiter = createTokenBucketLimiter({ deleteService: { perSecond: 1, burst: 1 } }, clock);
    const first = limiter.schedule('deleteService', async () => 'ran');
    const second = limiter.schedule('deleteService', async () => 'ran');
    await limiter.stop();
    await expect(first).resolves.toBe('ran');
    await expect(second).rejects.toBeInstanceOf(LimiterStoppedError);
    await expect(limiter.schedule('deleteService', async () => 1)).rejects.toBeInstanceOf(
      LimiterStoppedError,
    );
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects an invalid limit when created', () => {
    expect(() =>
      createTokenBucketLimiter({ listServices: { perSecond: 0, burst: 1 } }, new FakeClock()),
    ).toThrow(RangeError);
  });

  it('is the client default: configured limits hold Cloud Map calls back', async () => {
    const clock = new FakeClock();
    const fake = createFakeCloudMap();
    fake.seedNamespace('demo');
    const svc = fake.seedService('demo', 'web');
    const client = createCloudMapClient(fake, {
      clock,
      rateLimits: { registerInstance: { perSecond: 1, burst: 2 } },
    });
    const writes = Array.from({ length: 4 }, (_, i) =>
      client.registerInstance(svc.id, `i-${i}`, {}),
    );
    await settle();
    expect(fake.calls('registerInstance')).toBe(2);
    await advance(clock, 1_000, 100);
    expect(fake.calls('registerInstance')).toBe(3);
    await advance(clock, 1_000, 100);
    await Promise.all(writes);
    expect(fake.calls('registerInstance')).toBe(4);
    await client.close();
  });
});
