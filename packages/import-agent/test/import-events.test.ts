// Warning Events on ServiceImports for refused records, stale clusters and caps
// (docs/import-agent.md#events), through core's event recorder as the agent wires it: one
// Event per situation, not one per reconcile.
import { noopLogger, type Endpoint } from '@cloudmap-mcs/core';
import { createEventRecorder } from '@cloudmap-mcs/core/runtime';
import { describe, expect, it } from 'vitest';
import type { CloudMapSnapshot } from '../src/poller/snapshot.js';
import { endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

interface Recorded {
  reason: string;
  note: string;
  type: string;
  regarding: { kind: string; namespace: string; name: string; uid?: string };
}

function setup(opts: { staleCluster?: string; caps?: { total: number; perNamespace: number } }) {
  const cluster = createFakeCluster(['shop']);
  const base = staticSnapshot();
  // A cluster that never renewed a heartbeat, first seen long ago: stale.
  const snapshot: CloudMapSnapshot = {
    ...base,
    get: (ns, name) => {
      const e = base.get(ns, name);
      if (e === undefined || opts.staleCluster === undefined) return e;
      return { ...e, clustersFirstSeenMs: { [opts.staleCluster]: 0 }, confirmedAtMs: 1_000_000 };
    },
  };
  const clock = { now: 0 };
  const recorded: Recorded[] = [];
  const events = createEventRecorder({
    sink: { create: async (_ns, body) => void recorded.push(body as unknown as Recorded) },
    controller: 'cloudmap-mcs.io/import-agent',
    instance: 'pod-1',
    logger: noopLogger,
    now: () => clock.now,
  });
  const reconcile = reconcilerFor(cluster, snapshot, {
    events,
    ...(opts.caps === undefined ? {} : { caps: opts.caps }),
  });
  const of = (reason: string) => recorded.filter((e) => e.reason === reason);
  return { cluster, snapshot: base, clock, recorded, of, reconcile };
}

const metadata: Endpoint = { ...endpoints(1, 9)[0]!, address: '169.254.169.254' };

describe('ServiceImport Events', () => {
  it('RecordsRefused: one per reason and situation, again only after 10 minutes or a change', async () => {
    const { snapshot, clock, of, reconcile } = setup({});
    snapshot.set('shop', 'cart', [exportOf('c2', 'shop', 'cart', [...endpoints(2, 1), metadata])]);
    await reconcile('shop/cart');
    await reconcile('shop/cart');
    clock.now += 60_000;
    await reconcile('shop/cart');
    expect(of('RecordsRefused')).toHaveLength(1);
    const [event] = of('RecordsRefused');
    expect(event).toMatchObject({
      type: 'Warning',
      regarding: { kind: 'ServiceImport', namespace: 'shop', name: 'cart' },
    });
    expect(event?.regarding.uid).toBeDefined(); // the import exists (its other endpoints)
    expect(event?.note).toMatch(
      /^1 Cloud Map record\(s\) or part\(s\) refused \(refused-address\): shop\/cart c2 169\.254\.169\.254/,
    );
    clock.now += 10 * 60_000;
    await reconcile('shop/cart');
    expect(of('RecordsRefused')).toHaveLength(2);
    // Another refused record is another situation: said at once.
    snapshot.set('shop', 'cart', [
      exportOf('c2', 'shop', 'cart', [
        ...endpoints(2, 1),
        metadata,
        { ...metadata, address: '127.0.0.1' },
      ]),
    ]);
    await reconcile('shop/cart');
    expect(of('RecordsRefused')).toHaveLength(3);
    expect(of('RecordsRefused')[2]?.note).toMatch(/^2 Cloud Map record/);
  });

  it('ClusterStale names the clusters whose endpoints were dropped, once', async () => {
    const { snapshot, of, reconcile } = setup({ staleCluster: 'c2' });
    snapshot.set('shop', 'cart', [
      exportOf('c1', 'shop', 'cart', endpoints(1, 1)),
      exportOf('c2', 'shop', 'cart', endpoints(1, 2)),
    ]);
    await reconcile('shop/cart');
    await reconcile('shop/cart');
    expect(of('ClusterStale').map((e) => e.note)).toEqual([
      'endpoints of cluster(s) c2 dropped: no heartbeat renewal seen for 60 s (their export agent is down, denied or cut off from Cloud Map). They return at the next renewal.',
    ]);
    expect(of('RecordsRefused')).toEqual([]);
  });

  it('ImportCapReached on the import the cap refuses, once', async () => {
    const { snapshot, of, reconcile } = setup({ caps: { total: 1, perNamespace: 10 } });
    for (const name of ['a', 'b'])
      snapshot.set('shop', name, [exportOf('c2', 'shop', name, endpoints(1, 1))]);
    await reconcile('shop/a');
    await reconcile('shop/b');
    await reconcile('shop/b');
    expect(of('ImportCapReached')).toHaveLength(1);
    expect(of('ImportCapReached')[0]).toMatchObject({
      regarding: { kind: 'ServiceImport', namespace: 'shop', name: 'b' },
    });
    expect(of('ImportCapReached')[0]?.note).toContain('--max-imports 1');
  });

  it('a healthy import records none', async () => {
    const { snapshot, recorded, reconcile } = setup({});
    snapshot.set('shop', 'cart', [exportOf('c2', 'shop', 'cart', endpoints(2, 1))]);
    await reconcile('shop/cart');
    expect(recorded).toEqual([]);
  });
});
