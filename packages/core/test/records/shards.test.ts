import { describe, expect, it } from 'vitest';
import {
  checkServiceName,
  clusterPrefix,
  decodeServiceInstances,
  encodeClusterExport,
  fromShardInstance,
  mergeShardInstances,
  parseShardServiceName,
  ShardAttr,
  shardRefs,
  shardServiceName,
  toShardInstance,
  type CloudMapInstance,
} from '../../src/index.js';
import { clusterExport, endpoints } from '../planning/fixtures.js';

const a = { clusterId: 'cluster-a', clustersetId: 'set-1' };
const longName = `s${'x'.repeat(61)}9`; // 63 characters, the longest Service name

describe('shard service names', () => {
  it.each([
    ['cart', 1],
    ['cart', 99],
    [longName, 42],
  ])('%s shard %i is a valid Cloud Map name that parses back', (base, index) => {
    const name = shardServiceName(a, base, index);
    expect(checkServiceName(name)).toBeUndefined();
    expect(name.length).toBeLessThanOrEqual(127);
    expect(parseShardServiceName(name)).toEqual({
      prefix: clusterPrefix(a),
      index,
      baseName: base,
    });
  });

  it.each([
    'cart',
    '_mcs-heartbeat',
    '_mcs-shard-abc-1.cart',
    '_mcs-shard-0123456789ab-0.cart',
    '_mcs-shard-0123456789ab-1.Cart',
    '_mcs-shard-0123456789ab-100.cart',
  ])('%s is not a shard name', (name) => expect(parseShardServiceName(name)).toBeUndefined());

  it('refuses indices outside 1..99', () => {
    expect(() => shardServiceName(a, 'cart', 0)).toThrow(RangeError);
    expect(() => shardServiceName(a, 'cart', 100)).toThrow(RangeError);
  });
});

describe('shard instances', () => {
  const [record, ...eps] = encodeClusterExport(
    clusterExport('cluster-a', {}, endpoints(3)),
  ).instances;
  it('hide the clusterset id from CLUSTERSET_ID queries and round-trip', () => {
    const stored = toShardInstance(eps[0]!);
    expect(stored.attributes['CLUSTERSET_ID']).toBeUndefined();
    expect(stored.attributes[ShardAttr.ClustersetId]).toBe('set-1');
    expect(fromShardInstance(stored)).toEqual(eps[0]);
  });

  const withCount = (n: string): CloudMapInstance => ({
    id: record!.id,
    attributes: { ...record!.attributes, [ShardAttr.Count]: n },
  });

  it.each([
    ['absent', record!, 0],
    ['3', withCount('3'), 2],
    ['hostile 100000', withCount('100000'), 0],
    ['malformed', withCount('two'), 0],
  ])('an export record with count %s names %i shards', (_n, rec, refs) => {
    expect(shardRefs('cart', [rec], 'set-1')).toHaveLength(refs);
  });

  it('ignores export records of another clusterset', () => {
    expect(shardRefs('cart', [withCount('3')], 'set-2')).toEqual([]);
  });

  it('merges the named shards: only endpoints of the shard owner, and reports unread shards', () => {
    const shard1 = shardServiceName(a, 'cart', 1);
    const stranger = toShardInstance(
      encodeClusterExport(clusterExport('cluster-b', {}, endpoints(1, 2))).instances[1]!,
    );
    const leftover = shardServiceName(a, 'cart', 5);
    const shards: Record<string, CloudMapInstance[]> = {
      [shard1]: [...eps.slice(1).map(toShardInstance), stranger, toShardInstance(record!)],
      [leftover]: [toShardInstance(eps[0]!)],
    };
    const merged = mergeShardInstances(
      'cart',
      [withCount('3'), eps[0]!],
      'set-1',
      (n) => shards[n],
    );
    expect(merged.instances.map((i) => i.id)).toEqual([record!.id, ...eps.map((e) => e.id)]);
    expect(merged.rejected.map((r) => r.reason)).toEqual([
      'not a record of cluster cluster-a',
      'not an endpoint instance',
    ]);
    expect(merged.missing).toEqual([shardServiceName(a, 'cart', 2)]);
    // What the codec makes of it: one export of 3 endpoints.
    const decoded = decodeServiceInstances('shop', 'cart', merged.instances, {
      clustersetId: 'set-1',
    });
    expect(decoded.rejected).toEqual([]);
    expect(decoded.exports.map((e) => e.endpoints.length)).toEqual([3]);
  });

  it('a copy in both the base service and a shard (mid-move) decodes to one endpoint', () => {
    const shard1 = shardServiceName(a, 'cart', 1);
    const merged = mergeShardInstances('cart', [withCount('2'), ...eps], 'set-1', (n) =>
      n === shard1 ? eps.map(toShardInstance) : undefined,
    );
    expect(merged.instances).toHaveLength(7);
    const decoded = decodeServiceInstances('shop', 'cart', merged.instances, {
      clustersetId: 'set-1',
    });
    expect(decoded.exports[0]!.endpoints).toHaveLength(3);
  });
});
