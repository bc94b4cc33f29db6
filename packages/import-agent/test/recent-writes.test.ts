import { createAddressPolicy, encodeClusterExport, noopLogger } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import type { CloudMapSnapshot } from '../src/poller/snapshot.js';
import { createRecentWrites } from '../src/reconcile/recent-writes.js';
import { createImportReconciler } from '../src/reconcile/reconciler.js';
import { CLUSTERSET, endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { FakeClock } from '@cloudmap-mcs/core/testing';

function setup(withOverlay: boolean) {
  const clock = new FakeClock(1_000);
  const instances = encodeClusterExport(
    exportOf('c1', 'shop', 'cart', endpoints(150, 1)),
  ).instances;
  const snapshot: CloudMapSnapshot = {
    synced: true,
    get: (ns, name) =>
      ns === 'shop' && name === 'cart' ? { namespace: ns, name, instances } : undefined,
    services: () => [],
    allServices: () => [],
    heartbeatService: () => undefined,
    health: () => ({ reachable: true, message: 'ok', failingServices: 0 }),
  };
  const cluster = createFakeCluster();
  const reconcile = createImportReconciler({
    sources: cluster,
    writer: cluster,
    snapshot,
    trust: { clustersetId: CLUSTERSET, addresses: createAddressPolicy([]) },
    heartbeatTtlMs: 60_000,
    now: () => 1_000_000,
    logger: noopLogger,
    clock,
    // Without the overlay: entries expire at once.
    recent: createRecentWrites(clock, withOverlay ? 5_000 : 0),
  });
  return { clock, cluster, reconcile };
}

describe('our recent writes over a lagging informer cache', () => {
  it('a reconcile right after our writes, before the cache caught up, writes nothing again', async () => {
    const { cluster, reconcile, clock } = setup(true);
    cluster.freezeReads(); // the cache still shows the empty cluster
    await reconcile('shop/cart');
    const writes = cluster.writes;
    expect(writes).toBeGreaterThan(4);
    const second = await reconcile('shop/cart');
    expect(cluster.writes).toBe(writes);
    expect(second?.requeueAfterMs).toBeGreaterThan(0); // look again once the cache must have caught up
    clock.advance(6_000);
    cluster.thaw();
    expect(await reconcile('shop/cart')).toBeUndefined();
    expect(cluster.writes).toBe(writes);
  });

  it('without it the same lag writes every slice again (what the overlay saves)', async () => {
    const { cluster, reconcile } = setup(false);
    cluster.freezeReads();
    await reconcile('shop/cart');
    const writes = cluster.writes;
    await reconcile('shop/cart');
    // The ServiceImport and Service absent from the cache are read live before any create
    // (ownership.ts) and found up to date; the slices are planned from the stale cache.
    expect(cluster.writeLog.slice(writes)).toEqual([
      expect.stringMatching(/^apply EndpointSlice /),
      expect.stringMatching(/^apply EndpointSlice /),
    ]);
  });

  it('an entry ends when the cache shows the version we wrote, or after the TTL', () => {
    const clock = new FakeClock();
    const recent = createRecentWrites(clock, 5_000);
    const obj = { metadata: { name: 'a', namespace: 'n', resourceVersion: '7' } };
    recent.applied('Service', obj);
    const used = { untilMs: 0 };
    expect(recent.overlay('Service', 'n', 'a', undefined, used)).toEqual(obj);
    expect(used.untilMs).toBe(5_000);
    const cached = {
      metadata: { name: 'a', namespace: 'n', resourceVersion: '7', labels: { x: 'y' } },
    };
    expect(recent.overlay('Service', 'n', 'a', cached, { untilMs: 0 })).toBe(cached);
    recent.deleted('Service', 'n', 'a');
    expect(recent.overlay('Service', 'n', 'a', cached, { untilMs: 0 })).toBeUndefined();
    clock.advance(5_000);
    expect(recent.overlay('Service', 'n', 'a', cached, { untilMs: 0 })).toBe(cached);
  });
});

describe('recent writes: memory (issue 14)', () => {
  const slice = (name: string, rv: string) => ({
    metadata: {
      name,
      namespace: 'shop',
      resourceVersion: rv,
      managedFields: [{ manager: 'cloudmap-mcs-import-agent', operation: 'Apply' }],
    },
  });

  it('keeps what the informer cache keeps: no managedFields', () => {
    const clock = new FakeClock(1_000);
    const recent = createRecentWrites(clock, 5_000);
    recent.applied('Service', slice('cart', '7'));
    const used = { untilMs: 0 };
    const got = recent.overlay('Service', 'shop', 'cart', undefined, used);
    expect(got?.metadata).toEqual({ name: 'cart', namespace: 'shop', resourceVersion: '7' });
  });

  it('drops expired entries at a later write, even for keys never read again', () => {
    const clock = new FakeClock(1_000);
    const recent = createRecentWrites(clock, 5_000);
    for (let i = 0; i < 100; i++) recent.applied('EndpointSlice', slice(`s${i}`, '1'));
    expect(recent.size).toBe(100);
    clock.advance(5_000);
    recent.applied('Service', slice('other', '2'));
    expect(recent.size).toBe(1);
    // Within the ttl nothing is dropped: the entry just written is still laid over.
    clock.advance(4_999);
    recent.deleted('Service', 'shop', 'gone');
    expect(recent.size).toBe(2);
    expect(recent.overlay('Service', 'shop', 'other', undefined, { untilMs: 0 })).toBeDefined();
  });
});
