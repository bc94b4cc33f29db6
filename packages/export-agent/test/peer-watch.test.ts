import { describe, expect, it } from 'vitest';
import { CloudMapError } from '@cloudmap-mcs/core';
import { createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { createRevisionPeerWatch, peerRoundPeriodMs } from '../src/peer-watch.js';

const svc = (name: string) => ({ namespaceName: 'shop', serviceName: name });

/** A revision per service name that the test moves; every call is recorded. */
function setup(over: { budgetPerSecond?: number; failWith?: () => Error | undefined } = {}) {
  const clock = new FakeClock();
  const revisions = new Map<string, number>();
  const calls: string[] = [];
  const changes: string[] = [];
  const logger = createMemoryLogger();
  const watch = createRevisionPeerWatch({
    cloudMap: {
      discoverInstancesRevision: (_ns, name) => {
        calls.push(name);
        const error = over.failWith?.();
        if (error !== undefined) return Promise.reject(error);
        return Promise.resolve(revisions.get(name) ?? 1);
      },
    },
    clock,
    periodMs: 2_000,
    budgetPerSecond: over.budgetPerSecond ?? 100,
    jitter: 0,
    onChange: (key) => changes.push(key),
    logger,
  });
  /** Advances to the next round and lets its calls settle. */
  const round = async () => {
    clock.advance(2_000);
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { clock, revisions, calls, changes, watch, round, logger };
}

describe('revision peer watch', () => {
  it('requeues a key only when its revision moves past the one the reconcile read', async () => {
    const { revisions, calls, changes, watch, round } = setup();
    revisions.set('cart', 7);
    watch.watch('shop/cart', svc('cart'), 7);
    watch.start();
    await round();
    expect(calls).toEqual(['cart']);
    expect(changes).toEqual([]);
    revisions.set('cart', 9); // another cluster registered
    await round();
    expect(changes).toEqual(['shop/cart']);
    await round();
    expect(changes).toEqual(['shop/cart']);
    await watch.stop();
  });

  it('a revision the reconcile already read is no change (its own writes)', async () => {
    const { revisions, changes, watch, round } = setup();
    revisions.set('cart', 3);
    watch.watch('shop/cart', svc('cart'), 3);
    watch.start();
    await round();
    revisions.set('cart', 5);
    watch.watch('shop/cart', svc('cart'), 5); // the reconcile after our write read 5
    watch.watch('shop/cart', svc('cart'), 4); // an older cached read never goes back
    await round();
    expect(changes).toEqual([]);
    await watch.stop();
  });

  it('without a revision from the reconcile, the first check is the baseline', async () => {
    const { revisions, changes, watch, round } = setup();
    revisions.set('cart', 4);
    watch.watch('shop/cart', svc('cart'));
    watch.start();
    await round();
    expect(changes).toEqual([]);
    revisions.set('cart', 6);
    await round();
    expect(changes).toEqual(['shop/cart']);
    await watch.stop();
  });

  it('stops checking an un-watched key', async () => {
    const { calls, watch, round } = setup();
    watch.watch('shop/cart', svc('cart'), 1);
    watch.watch('shop/web', svc('web'), 1);
    watch.start();
    await round();
    watch.unwatch('shop/cart');
    await round();
    expect(calls).toEqual(['cart', 'web', 'web']);
    expect(watch.size()).toBe(1);
    await watch.stop();
    await round();
    expect(calls).toHaveLength(3);
  });

  it('more exports than the budget stretch the period', () => {
    expect(peerRoundPeriodMs(2_000, 100, 100)).toBe(2_000);
    expect(peerRoundPeriodMs(2_000, 300, 100)).toBe(3_000);
    expect(peerRoundPeriodMs(2_000, 5_000, 0)).toBe(2_000);
  });

  it('a Cloud Map outage is one warning, its end one info line; a missing service none', async () => {
    let error: Error | undefined;
    const { watch, round, logger } = setup({ failWith: () => error });
    watch.watch('shop/cart', svc('cart'), 1);
    watch.start();
    error = new CloudMapError('ServiceUnavailable', 'down', 'discoverInstancesRevision');
    await round();
    await round();
    error = undefined;
    await round();
    error = new CloudMapError('ServiceNotFound', 'gone', 'discoverInstancesRevision');
    await round();
    const lines = logger.entries.filter((e) => e.level !== 'debug').map((e) => e.message);
    expect(lines).toEqual([
      'peer revision checks failing; conflicts follow other clusters on resync',
      'peer revision checks recovered',
    ]);
    await watch.stop();
  });
});
