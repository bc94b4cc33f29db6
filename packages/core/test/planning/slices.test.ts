import { describe, expect, it } from 'vitest';
import {
  LABEL_MANAGED_BY,
  LABEL_MCS_SERVICE_NAME,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  planSlices,
  type SlicePlan,
  type SlicePlanInput,
  type SliceState,
  type SourceEndpoints,
} from '../../src/index.js';
import { endpoint, endpoints, frozen } from './fixtures.js';

const base = {
  namespace: 'shop',
  importName: 'cart',
  derivedName: 'derived-x',
  managedBy: 'cloudmap-mcs',
};
const plan = (sources: SourceEndpoints[], observed: SliceState[] = [], max?: number): SlicePlan => {
  const input: SlicePlanInput = frozen({
    ...base,
    sources,
    observed,
    ...(max === undefined ? {} : { maxEndpointsPerSlice: max }),
  });
  return planSlices(input);
};
/** What the cluster holds after applying a plan. */
const applied = (before: SliceState[], p: SlicePlan): SliceState[] => {
  const byName = new Map(before.map((s) => [s.name, s]));
  for (const name of p.delete) byName.delete(name);
  for (const s of p.apply) byName.set(s.name, s);
  return [...byName.values()];
};
const sizes = (slices: SliceState[]): number[] =>
  slices.map((s) => s.endpoints.length).sort((a, b) => b - a);

describe('planSlices', () => {
  it('labels every slice for kube-proxy and MCS DNS', () => {
    const p = plan([{ clusterId: 'c1', endpoints: [endpoint('10.0.0.1')] }]);
    expect(p.apply).toHaveLength(1);
    expect(p.apply[0]?.labels).toEqual({
      [LABEL_SERVICE_NAME]: 'derived-x',
      [LABEL_MCS_SERVICE_NAME]: 'cart',
      [LABEL_SOURCE_CLUSTER]: 'c1',
      [LABEL_MANAGED_BY]: 'cloudmap-mcs',
    });
    expect(p.delete).toEqual([]);
  });

  it('one cluster and one address type per slice, at most 100 endpoints each', () => {
    const p = plan([
      { clusterId: 'c1', endpoints: [...endpoints(250, 1), endpoint('fd00::1')] },
      { clusterId: 'c2', endpoints: endpoints(3, 2) },
    ]);
    const summary = p.desired.map((s) => [
      s.labels[LABEL_SOURCE_CLUSTER],
      s.addressType,
      s.endpoints.length,
    ]);
    expect(summary.sort()).toEqual(
      [
        ['c1', 'IPv4', 100],
        ['c1', 'IPv4', 100],
        ['c1', 'IPv4', 50],
        ['c1', 'IPv6', 1],
        ['c2', 'IPv4', 3],
      ].sort(),
    );
    expect(new Set(p.desired.map((s) => s.name)).size).toBe(5);
  });

  it('carries ready/serving/terminating, hostname, nodeName and zone', () => {
    const ep = endpoint('10.0.0.7', {
      conditions: { ready: false, serving: true, terminating: true },
      hostname: 'cart-1',
      nodeName: 'node-3',
      zone: 'us-east-1b',
    });
    expect(plan([{ clusterId: 'c1', endpoints: [ep] }]).apply[0]?.endpoints).toEqual([
      {
        address: '10.0.0.7',
        conditions: { ready: false, serving: true, terminating: true },
        hostname: 'cart-1',
        nodeName: 'node-3',
        zone: 'us-east-1b',
      },
    ]);
  });

  it('writes nothing when nothing changed (also from a fresh plan, as after a restart)', () => {
    const sources = [{ clusterId: 'c1', endpoints: endpoints(230, 1) }];
    const first = plan(sources);
    // Observed order and extra labels added by others do not count as changes.
    const observed = first.apply.map((s) => ({
      ...s,
      labels: { ...s.labels, extra: 'x' },
      endpoints: [...s.endpoints].reverse(),
    }));
    const again = plan(sources, observed);
    expect(again.apply).toEqual([]);
    expect(again.delete).toEqual([]);
  });

  it('one endpoint more or less touches one slice', () => {
    const first = plan([{ clusterId: 'c1', endpoints: endpoints(250, 1) }]);
    const state = applied([], first);
    const removed = endpoints(250, 1).filter((e) => e.address !== '10.1.0.5');
    const less = plan([{ clusterId: 'c1', endpoints: removed }], state);
    expect(less.apply).toHaveLength(1);
    expect(less.delete).toEqual([]);
    // The newcomer fills the hole left in the first slice rather than growing the last.
    const more = plan(
      [{ clusterId: 'c1', endpoints: [...removed, endpoint('10.9.9.9')] }],
      applied(state, less),
    );
    expect(more.apply).toHaveLength(1);
    expect(more.apply[0]?.endpoints).toHaveLength(100);
    expect(sizes(applied(applied(state, less), more))).toEqual([100, 100, 50]);
  });

  it('a condition change rewrites only the slice holding the endpoint', () => {
    const eps = endpoints(150, 1);
    const state = applied([], plan([{ clusterId: 'c1', endpoints: eps }]));
    const flipped = eps.map((e) =>
      e.address === '10.1.0.140'
        ? { ...e, conditions: { ready: false, serving: false, terminating: true } }
        : e,
    );
    const p = plan([{ clusterId: 'c1', endpoints: flipped }], state);
    expect(p.apply).toHaveLength(1);
    expect(
      p.apply[0]?.endpoints.find((e) => e.address === '10.1.0.140')?.conditions.terminating,
    ).toBe(true);
  });

  it('250 endpoints → 3 slices; back to 5 → 1 slice', () => {
    const up = plan([{ clusterId: 'c1', endpoints: endpoints(250, 1) }]);
    expect(sizes(up.desired)).toEqual([100, 100, 50]);
    // Keep 5 endpoints spread over all three slices: they must fold into one.
    const keep = endpoints(250, 1).filter((_, i) => i % 50 === 0);
    const down = plan([{ clusterId: 'c1', endpoints: keep }], up.desired);
    const after = applied(up.desired, down);
    expect(sizes(after)).toEqual([5]);
    expect(down.delete).toHaveLength(2);
    expect(down.apply).toHaveLength(1);
    expect(plan([{ clusterId: 'c1', endpoints: keep }], after)).toEqual({
      desired: after,
      apply: [],
      delete: [],
    });
  });

  it('a cluster that stops exporting loses its slices; others are untouched', () => {
    const both = plan([
      { clusterId: 'c1', endpoints: endpoints(3, 1) },
      { clusterId: 'c2', endpoints: endpoints(3, 2) },
    ]);
    const p = plan([{ clusterId: 'c2', endpoints: endpoints(3, 2) }], both.desired);
    expect(p.apply).toEqual([]);
    expect(p.delete).toEqual(
      both.desired.filter((s) => s.labels[LABEL_SOURCE_CLUSTER] === 'c1').map((s) => s.name),
    );
    expect(plan([], both.desired).delete).toHaveLength(2);
  });

  it('overlapping pod CIDRs: the same address from two clusters lives in two slices', () => {
    const p = plan([
      { clusterId: 'c1', endpoints: [endpoint('10.0.0.1')] },
      { clusterId: 'c2', endpoints: [endpoint('10.0.0.1')] },
    ]);
    expect(p.desired.map((s) => [s.labels[LABEL_SOURCE_CLUSTER], s.endpoints[0]?.address])).toEqual(
      expect.arrayContaining([
        ['c1', '10.0.0.1'],
        ['c2', '10.0.0.1'],
      ]),
    );
  });

  it('foreign or malformed names among our slices are deleted, never adopted', () => {
    const good = plan([{ clusterId: 'c1', endpoints: endpoints(2, 1) }]).desired;
    const stray = { ...(good[0] as SliceState), name: 'derived-x-manual' };
    const p = plan([{ clusterId: 'c1', endpoints: endpoints(2, 1) }], [...good, stray]);
    expect(p.apply).toEqual([]);
    expect(p.delete).toEqual(['derived-x-manual']);
  });

  it('golden: two clusters, two families, ports per cluster', async () => {
    const p = plan(
      [
        {
          clusterId: 'c1',
          endpoints: [
            endpoint('10.0.0.2', { hostname: 'cart-1', nodeName: 'n2', zone: 'a' }),
            endpoint('10.0.0.1', {
              conditions: { ready: false, serving: false, terminating: true },
            }),
            endpoint('fd00::1', {
              ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }],
            }),
          ],
        },
        { clusterId: 'c2', endpoints: endpoints(3, 2) },
      ],
      [],
      2,
    );
    await expect(JSON.stringify(p, null, 2) + '\n').toMatchFileSnapshot(
      'golden/slices-two-clusters.json.snap',
    );
  });
});
