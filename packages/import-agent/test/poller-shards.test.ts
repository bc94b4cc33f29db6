// The poller reads a sharded export (ADR 0015) as one Kubernetes Service: shards are read as
// soon as the base service's export record names them, their changes are changes of the base
// name, and they are never listed as services of their own.
import {
  decodeServiceInstances,
  encodeClusterExport,
  noopLogger,
  planShardedExport,
  shardServiceName,
  toShardInstance,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, type FakeCloudMap, FakeClock } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../src/poller/poller.js';
import { CLUSTERSET, endpoints, exportOf, settle } from './cloudmap-fixtures.js';

const periods = {
  slowMs: 60_000,
  fastMs: 5_000,
  resyncMs: 600_000,
  jitter: 0,
  maxBackoffMs: 120_000,
};
const c1 = { clusterId: 'c1', clustersetId: CLUSTERSET };

/** Writes c1's export of n endpoints the way the export agent lays it out. */
async function publishSharded(cm: FakeCloudMap, n: number): Promise<void> {
  const ns = cm.namespaceByName('shop') ?? cm.seedNamespace('shop', 'HTTP');
  const desired = encodeClusterExport(exportOf('c1', 'shop', 'cart', endpoints(n, 1))).instances;
  const plan = planShardedExport({
    cluster: c1,
    desired,
    base: [],
    shards: new Map(),
    settled: true,
  });
  for (const s of plan.services) {
    const name = s.index === 0 ? 'cart' : shardServiceName(c1, 'cart', s.index);
    const svc = cm.serviceByName('shop', name) ?? cm.seedService(ns.name, name);
    for (const i of s.desired) {
      const stored = s.index === 0 ? i : toShardInstance(i);
      await cm.registerInstance(svc.id, stored.id, stored.attributes);
    }
  }
}

function setup() {
  const cm = createFakeCloudMap();
  const clock = new FakeClock();
  const changes: string[] = [];
  const poller = createPoller({
    port: cm,
    clock,
    logger: noopLogger,
    clustersetId: CLUSTERSET,
    periods,
    random: () => 0,
    now: () => clock.now(),
    isLocalNamespace: (n) => n === 'shop',
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: () => {},
  });
  const tick = async (ms: number): Promise<void> => {
    clock.advance(0);
    await settle();
    for (let left = ms; left > 0; left -= Math.min(left, 1_000)) {
      clock.advance(Math.min(left, 1_000));
      await settle(4);
    }
    await settle();
  };
  return { cm, poller, changes, tick };
}

const addresses = (instances: Parameters<typeof decodeServiceInstances>[2]) =>
  decodeServiceInstances('shop', 'cart', instances, { clustersetId: CLUSTERSET }).exports.flatMap(
    (e) => e.endpoints,
  ).length;

describe('poller and shard services', () => {
  it('serves 2,500 endpoints of one export spread over 4 services as one service', async () => {
    const { cm, poller, changes, tick } = setup();
    await publishSharded(cm, 2500);
    poller.start();
    await tick(0);
    expect(poller.synced).toBe(true);
    expect(poller.services('shop').map((s) => s.name)).toEqual(['cart']);
    expect(poller.get('shop', shardServiceName(c1, 'cart', 1))).toBeUndefined();
    expect(addresses(poller.get('shop', 'cart')!.instances)).toBe(2500);
    expect(new Set(changes)).toEqual(new Set(['shop/cart']));
    await poller.stop();
  });

  it('reads a shard named by a new export record at once, and reports its changes as the base', async () => {
    const { cm, poller, changes, tick } = setup();
    await publishSharded(cm, 900);
    poller.start();
    await tick(0);
    expect(addresses(poller.get('shop', 'cart')!.instances)).toBe(900);
    // Growing to 2,500 creates shards after the listing: the fast round finds them through
    // the export record, well before the next slow listing (60 s).
    changes.length = 0;
    await publishSharded(cm, 2500);
    await tick(periods.fastMs);
    expect(addresses(poller.get('shop', 'cart')!.instances)).toBe(2500);
    // A change inside shard 2 only: seen by its revision, reported as shop/cart.
    changes.length = 0;
    const shard2 = cm.serviceByName('shop', shardServiceName(c1, 'cart', 2))!;
    const [one] = cm.instancesOf('shop', shard2.name);
    await cm.registerInstance(shard2.id, one!.id, { ...one!.attributes, READY: 'false' });
    await tick(periods.fastMs);
    expect(changes).toEqual(['shop/cart']);
    const got = decodeServiceInstances('shop', 'cart', poller.get('shop', 'cart')!.instances, {
      clustersetId: CLUSTERSET,
    });
    expect(got.exports[0]!.endpoints.filter((e) => !e.conditions.ready)).toHaveLength(1);
    // A slow listing keeps the shards (they are listed) and still serves one service.
    await tick(periods.slowMs);
    expect(poller.services('shop').map((s) => s.name)).toEqual(['cart']);
    expect(addresses(poller.get('shop', 'cart')!.instances)).toBe(2500);
    await poller.stop();
  });
});
