// Shards (ADR 0015) over the fake Cloud Map, which refuses a 1,001st instance in a service like
// Cloud Map does: a Service past 1,000 endpoint instances exports completely, resizes without
// a moment in which a reader misses an endpoint that exists before and after, and un-exports
// from every shard.
import { afterEach, describe, expect, it } from 'vitest';
import {
  Attr,
  decodeServiceInstances,
  mergeShardInstances,
  ShardAttr,
  shardServiceName,
} from '@cloudmap-mcs/core';
import type { FakeCloudMap } from '@cloudmap-mcs/core/testing';
import {
  clusterA,
  createFakeCloudMap,
  FakeK8s,
  startAgent,
  type Agent,
  converged,
} from './harness.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const KEY = 'shop/cart';
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

const ip = (i: number) =>
  `10.${1 + Math.floor(i / 62500)}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;

/** n endpoints in slices of 100, as the EndpointSlice controller would cut them. */
function setEndpoints(k8s: FakeK8s, n: number, before: number) {
  for (let s = 0; s * 100 < Math.max(n, before); s++) {
    const name = `cart-${s}`;
    const ips = Array.from({ length: Math.max(0, Math.min(100, n - s * 100)) }, (_, j) => ({
      ip: ip(s * 100 + j),
      node: 'n1',
    }));
    if (ips.length === 0) k8s.delete('slice', `shop/${name}`);
    else k8s.apply('slice', slice('shop', 'cart', name, ips));
  }
}

/** What an importer reads: the base service plus the shards its export records name. */
function imported(fake: FakeCloudMap): { addresses: Set<string>; shardCount: string | undefined } {
  const base = fake.instancesOf('shop', 'cart');
  const merged = mergeShardInstances('cart', base, clusterA.clustersetId, (name) =>
    fake.serviceByName('shop', name) === undefined ? undefined : fake.instancesOf('shop', name),
  );
  const decoded = decodeServiceInstances('shop', 'cart', merged.instances, {
    clustersetId: clusterA.clustersetId,
  });
  const record = base.find((i) => i.attributes[Attr.Record] === 'export');
  return {
    addresses: new Set(decoded.exports.flatMap((e) => e.endpoints.map((x) => x.address))),
    shardCount: record?.attributes[ShardAttr.Count],
  };
}

/** The addresses a reader finds, without decoding (cheap enough to check after every write). */
function readable(fake: FakeCloudMap): Set<string> {
  const merged = mergeShardInstances(
    'cart',
    fake.instancesOf('shop', 'cart'),
    clusterA.clustersetId,
    (name) =>
      fake.serviceByName('shop', name) === undefined ? undefined : fake.instancesOf('shop', name),
  );
  return new Set(merged.instances.map((i) => i.attributes[Attr.Ipv4] ?? ''));
}

describe('sharded exports', () => {
  it('exports 2,500 endpoints over 4 services, resizes without losing one, un-exports all', async () => {
    const fake = createFakeCloudMap();
    const k8s = new FakeK8s(clusterA);
    const fast = { perSecond: 5000, burst: 5000 };
    const rateLimits = { registerInstance: fast, deregisterInstance: fast, getOperation: fast };
    let afterDeregister: (() => void) | undefined;
    const watched: FakeCloudMap = {
      ...fake,
      deregisterInstance: async (serviceId, instanceId) => {
        const ref = await fake.deregisterInstance(serviceId, instanceId);
        afterDeregister?.();
        return ref;
      },
    };
    agents.push(startAgent(k8s, watched, { resyncMs: 50, rateLimits }));
    k8s.apply('service', service('shop', 'cart'));
    setEndpoints(k8s, 900, 0);
    k8s.apply('export', serviceExport('shop', 'cart'));
    await converged(() => expect(imported(fake).addresses.size).toBe(900));
    expect(fake.instancesOf('shop', 'cart')).toHaveLength(901);
    expect(k8s.condition(KEY, 'Sharded')).toBeUndefined();

    // Grow past one service. After every deregistration, every endpoint present before and
    // after is still readable (the fake applies writes at once, so each call is a moment).
    const lost = new Set<string>();
    let checks = 0;
    afterDeregister = () => {
      const seen = readable(fake);
      for (let i = 0; i < 900; i++) if (!seen.has(ip(i))) lost.add(ip(i));
      checks++;
    };
    setEndpoints(k8s, 2500, 900);
    await converged(() => {
      expect(imported(fake).addresses.size).toBe(2500);
      expect(imported(fake).shardCount).toBe('4');
      expect(fake.instancesOf('shop', 'cart').length).toBe(101);
    });
    afterDeregister = undefined;
    expect(checks).toBe(800);
    expect([...lost]).toEqual([]);
    const shards = [1, 2, 3].map((k) =>
      fake.instancesOf('shop', shardServiceName(clusterA, 'cart', k)),
    );
    expect(shards.map((s) => s.length)).toEqual([1000, 1000, 400]);
    // Shard instances hide from CLUSTERSET_ID= readers (the AWS controller).
    expect(shards.flat().every((i) => i.attributes[Attr.ClustersetId] === undefined)).toBe(true);
    await converged(() => {
      expect(k8s.condition(KEY, 'Ready')?.status).toBe('True');
      expect(k8s.condition(KEY, 'Sharded')).toMatchObject({
        status: 'True',
        reason: 'InstancesPerService',
      });
    });
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(
      /and 3 shard services \(2500 endpoint instances/,
    );

    // Shrink back into one service: the count drops only once the shards are empty.
    setEndpoints(k8s, 300, 2500);
    await converged(() => {
      expect(imported(fake).addresses.size).toBe(300);
      expect(imported(fake).shardCount).toBeUndefined();
      expect(fake.instancesOf('shop', 'cart')).toHaveLength(301);
      expect(k8s.condition(KEY, 'Sharded')).toMatchObject({ status: 'False' });
    });
    for (let k = 1; k <= 3; k++)
      expect(fake.instancesOf('shop', shardServiceName(clusterA, 'cart', k))).toEqual([]);

    // Grow again and un-export: nothing of ours is left anywhere.
    setEndpoints(k8s, 1500, 300);
    await converged(() => expect(imported(fake).addresses.size).toBe(1500));
    await converged(() => expect(imported(fake).shardCount).toBe('3'));
    k8s.delete('export', KEY);
    await converged(() => {
      expect(fake.instancesOf('shop', 'cart')).toEqual([]);
      for (let k = 1; k <= 3; k++)
        expect(fake.instancesOf('shop', shardServiceName(clusterA, 'cart', k))).toEqual([]);
    });
  }, 300_000);
});
