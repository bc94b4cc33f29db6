import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  encodeClusterExport,
  planShardedExport,
  ShardAttr,
  type CloudMapInstance,
  type ShardPlan,
  type ShardPlanInput,
} from '../../src/index.js';
import { clusterExport, endpoints, frozen } from './fixtures.js';

/** This cluster's encoded instances for n endpoints (export record first). */
const encoded = (n: number, clusterId = 'cluster-a', octet = 1): CloudMapInstance[] =>
  encodeClusterExport(clusterExport(clusterId, {}, endpoints(n, octet))).instances;
const cluster = { clusterId: 'cluster-a', clustersetId: 'set-1' };
const record = (is: readonly CloudMapInstance[]) => is[0]!;
const eps = (is: readonly CloudMapInstance[]) => is.slice(1);

/** An observed layout: base (export record + the first `inBase`), then shards of `perShard`. */
function layout(
  n: number,
  inBase: number,
  perShard: number,
  count: number,
): Pick<ShardPlanInput, 'base' | 'shards'> {
  const all = encoded(n);
  const rec = { ...record(all), attributes: { ...record(all).attributes } };
  if (count > 1) rec.attributes[ShardAttr.Count] = String(count);
  const rest = eps(all);
  const shards = new Map<number, CloudMapInstance[]>();
  for (let k = 1, i = inBase; i < rest.length; k++, i += perShard)
    shards.set(k, rest.slice(i, i + perShard));
  return { base: [rec, ...rest.slice(0, inBase)], shards };
}

const sizes = (p: ShardPlan) =>
  Object.fromEntries(p.services.map((s) => [s.index, s.desired.length]));
const counts = (p: ShardPlan) =>
  Object.fromEntries(
    p.services.map((s) => [s.index, [s.plan.register.length, s.plan.deregister.length]]),
  );

const others = (n: number) => encoded(n, 'cluster-b', 2);

describe('planShardedExport', () => {
  it.each<
    [string, ShardPlanInput, Partial<ShardPlan>, Record<number, number>, Record<number, number[]>]
  >([
    [
      '10 endpoints, nothing observed: unsharded, all in the base service',
      { cluster, desired: encoded(10), base: [], shards: new Map(), settled: true },
      { shardCount: 1, neededCount: 1, sharded: false, heldBack: 0 },
      { 0: 11 },
      { 0: [11, 0] },
    ],
    [
      '999 endpoints + the export record fill the base service exactly: unsharded',
      { cluster, desired: encoded(999), base: [], shards: new Map(), settled: true },
      { shardCount: 1, sharded: false },
      { 0: 1000 },
      { 0: [1000, 0] },
    ],
    [
      '1,000 endpoints: sharded, 100 stay in the base service, 900 in shard 1',
      { cluster, desired: encoded(1000), base: [], shards: new Map(), settled: true },
      { shardCount: 2, neededCount: 2, sharded: true },
      { 0: 101, 1: 900 },
      { 0: [101, 0], 1: [900, 0] },
    ],
    [
      '2,500 endpoints: base 100, shards of 1,000, 1,000 and 400',
      { cluster, desired: encoded(2500), base: [], shards: new Map(), settled: true },
      { shardCount: 4, neededCount: 4, sharded: true },
      { 0: 101, 1: 1000, 2: 1000, 3: 400 },
      { 0: [101, 0], 1: [1000, 0], 2: [1000, 0], 3: [400, 0] },
    ],
    [
      '60 endpoints next to 950 of another cluster: 49 fit the base service, 11 go to shard 1',
      { cluster, desired: encoded(60), base: others(949), shards: new Map(), settled: true },
      { shardCount: 2, sharded: true },
      { 0: 50, 1: 11 },
      { 0: [50, 0], 1: [11, 0] },
    ],
    [
      'in sync at 2,500: nothing to write',
      { cluster, desired: encoded(2500), ...layout(2500, 100, 1000, 4), settled: true },
      { shardCount: 4, heldBack: 0 },
      { 0: 101, 1: 1000, 2: 1000, 3: 400 },
      { 0: [0, 0], 1: [0, 0], 2: [0, 0], 3: [0, 0] },
    ],
    [
      'growing 900 → 1,200 unsharded: shards get theirs first, the base copies wait',
      { cluster, desired: encoded(1200), ...layout(900, 900, 1000, 1), settled: false },
      { shardCount: 3, neededCount: 3, heldBack: 800 },
      { 0: 101, 1: 1000, 2: 100 },
      { 0: [1, 0], 1: [1000, 0], 2: [100, 0] },
    ],
    [
      'shrinking 2,500 → 1,500: shard 3 is emptied into shards 1-2 once they hold the copies',
      { cluster, desired: encoded(1500), ...layout(2500, 100, 1000, 4), settled: true },
      // 1,400 beyond the base fit shards 1-2; shard 3's 400 are endpoints that are gone.
      { shardCount: 4, neededCount: 3, heldBack: 0 },
      { 0: 101, 1: 1000, 2: 400, 3: 0 },
      { 0: [0, 0], 1: [0, 0], 2: [0, 600], 3: [0, 400] },
    ],
    [
      'sharded at 950: stays sharded (hysteresis: 899 places to spare needed)',
      { cluster, desired: encoded(950), ...layout(1100, 100, 1000, 2), settled: true },
      { shardCount: 2, neededCount: 2, sharded: true, heldBack: 0 },
      { 0: 101, 1: 850 },
      { 0: [0, 0], 1: [0, 150] },
    ],
    [
      'sharded, shrunk to 500: back into the base service, shard copies go once settled',
      { cluster, desired: encoded(500), ...layout(1100, 100, 1000, 2), settled: false },
      { shardCount: 2, neededCount: 1, sharded: false, heldBack: 400 },
      { 0: 501, 1: 0 },
      // 400 registered in the base; the export record keeps MCS_SHARD_COUNT=2 (unchanged).
      { 0: [400, 0], 1: [0, 600] },
    ],
  ])('%s', (_name, input, expected, wantSizes, wantCounts) => {
    const plan = planShardedExport(frozen(input));
    expect(plan).toMatchObject(expected);
    expect(plan.problem).toBeUndefined();
    expect(sizes(plan)).toEqual(wantSizes);
    expect(counts(plan)).toEqual(wantCounts);
    // Never more than a service holds, counting the other clusters' base instances.
    const othersInBase = input.base.filter((i) => i.attributes['CLUSTER_ID'] !== 'cluster-a');
    for (const s of plan.services)
      expect(s.desired.length + (s.index === 0 ? othersInBase.length : 0)).toBeLessThanOrEqual(
        1000,
      );
    // Every desired instance is placed exactly once.
    const placed = plan.services.flatMap((s) => s.desired.map((i) => i.id));
    expect(new Set(placed).size).toBe(placed.length);
    expect(placed.length).toBe(input.desired.length);
  });

  it('moved copies are dropped only once the new place is observed and nothing is in flight', () => {
    const grown = layout(900, 900, 1000, 1);
    const first = planShardedExport({ cluster, desired: encoded(1200), ...grown, settled: true });
    // The shard copies are not observed yet: nothing leaves the base service.
    expect(first.heldBack).toBe(800);
    expect(first.services[0]!.plan.deregister).toEqual([]);
    // Next reconcile: the registrations landed (observed), nothing in flight.
    const observedShards = new Map(
      first.services.filter((s) => s.index > 0).map((s) => [s.index, s.desired]),
    );
    const base = [first.services[0]!.plan.register[0]!, ...grown.base.slice(1)];
    const second = planShardedExport({
      cluster,
      desired: encoded(1200),
      base,
      shards: observedShards,
      settled: true,
    });
    expect(second.heldBack).toBe(0);
    expect(second.services[0]!.plan.deregister).toHaveLength(800);
    expect(
      second.services.filter((s) => s.index > 0).every((s) => s.plan.register.length === 0),
    ).toBe(true);
  });

  it('the export record names the services in use, and is unchanged when unsharded', () => {
    const small = planShardedExport({
      cluster,
      desired: encoded(3),
      base: [],
      shards: new Map(),
      settled: true,
    });
    expect(small.services[0]!.plan.register[0]).toEqual(record(encoded(3)));
    const big = planShardedExport({
      cluster,
      desired: encoded(2500),
      base: [],
      shards: new Map(),
      settled: true,
    });
    expect(big.services[0]!.plan.register[0]!.attributes[ShardAttr.Count]).toBe('4');
  });

  it('keeps MCS_SHARD_COUNT while a surplus shard still holds instances, lowers it after', () => {
    const shrunk = layout(1100, 100, 1000, 2);
    const emptied = new Map([[1, [] as CloudMapInstance[]]]);
    const after = planShardedExport({
      cluster,
      desired: encoded(500),
      base: [...shrunk.base, ...eps(encoded(500)).slice(100)],
      shards: emptied,
      settled: true,
    });
    expect(after.shardCount).toBe(1);
    expect(after.services[0]!.plan.register.map((i) => i.id)).toEqual([record(encoded(500)).id]);
    expect(after.services[0]!.plan.register[0]!.attributes[ShardAttr.Count]).toBeUndefined();
  });

  it('reports, and writes nothing, when the base service has no room for the export record', () => {
    const plan = planShardedExport({
      cluster,
      desired: encoded(5),
      base: others(999),
      shards: new Map(),
      settled: true,
    });
    expect(plan.services).toEqual([]);
    expect(plan.problem).toMatch(/no room for this cluster's export record/);
  });

  it('is deterministic: the same input gives the same placement', () => {
    const input = { cluster, desired: encoded(2500), ...layout(1800, 100, 1000, 3), settled: true };
    expect(planShardedExport(input)).toEqual(planShardedExport(structuredClone(input)));
  });
});

// The placement of a 2,500-endpoint export, pinned: service, instances, first and last ID.
const golden = new URL('./golden/shard-plan-2500.json', import.meta.url);
describe('shard placement golden file', () => {
  it('2,500 endpoints next to 300 instances of another cluster', () => {
    const plan = planShardedExport({
      cluster,
      desired: encoded(2500),
      base: others(299),
      shards: new Map(),
      settled: true,
    });
    const summary = {
      shardCount: plan.shardCount,
      services: plan.services.map((s) => ({
        index: s.index,
        instances: s.desired.length,
        first: s.desired[0]!.id,
        last: s.desired.at(-1)!.id,
      })),
      exportRecord: plan.services[0]!.desired[0],
    };
    const text = `${JSON.stringify(summary, null, 2)}\n`;
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(golden, text);
    expect(text).toBe(readFileSync(golden, 'utf8'));
  });
});
