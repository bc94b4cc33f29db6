// Issue 11 item 2: an object the import agent did not create is never modified or deleted.
// The fake cluster's Service cache is filtered by our label, as the real informer is, so a
// user's Service is invisible to it (the cause of the original takeover).
import { derivedServiceName } from '@cloudmap-mcs/core';
import { createMemoryEventRecorder, createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import {
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type EndpointSliceObject,
  type ServiceImportObject,
  type ServiceObject,
} from '../src/reconcile/k8s-types.js';
import { missingMarker } from '../src/reconcile/ownership.js';
import { endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster, type FakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

const derived = derivedServiceName('shop', 'cart');
const owner = { importName: 'cart', derivedName: derived };
const ours = { [LABEL_MANAGED_BY]: MANAGED_BY };
const siRef = {
  apiVersion: 'multicluster.x-k8s.io/v1beta1',
  kind: 'ServiceImport',
  name: 'cart',
  uid: 'u1',
};
const svcRef = { apiVersion: 'v1', kind: 'Service', name: derived, uid: 'u2' };

describe('missingMarker: what makes an object ours', () => {
  const meta = (over: object) => ({ name: 'x', namespace: 'shop', ...over });
  it.each([
    ['ServiceImport', {}, 'no app.kubernetes.io/managed-by=cloudmap-mcs-import-agent label'],
    ['ServiceImport', { labels: ours }, undefined],
    [
      'ServiceImport',
      { labels: { [LABEL_MANAGED_BY]: 'helm' } },
      'no app.kubernetes.io/managed-by=cloudmap-mcs-import-agent label',
    ],
    ['Service', { labels: ours }, 'no owner reference to ServiceImport cart'],
    [
      'Service',
      { ownerReferences: [siRef] },
      'no app.kubernetes.io/managed-by=cloudmap-mcs-import-agent label',
    ],
    [
      'Service',
      { labels: ours, ownerReferences: [{ ...siRef, name: 'other' }] },
      'no owner reference to ServiceImport cart',
    ],
    [
      'Service',
      { labels: ours, ownerReferences: [{ ...siRef, apiVersion: 'example.com/v1' }] },
      'no owner reference to ServiceImport cart',
    ],
    ['Service', { labels: ours, ownerReferences: [siRef] }, undefined],
    ['EndpointSlice', { labels: ours }, `no owner reference to Service ${derived}`],
    ['EndpointSlice', { labels: ours, ownerReferences: [svcRef] }, undefined],
  ] as const)('%s %j → %s', (kind, over, expected) => {
    expect(missingMarker(kind, meta(over), owner)).toBe(expected);
  });
});

/** A Service a user created by hand, with the name the import derives. */
function userService(labels: Record<string, string> = { app: 'legacy' }): ServiceObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: derived,
      namespace: 'shop',
      uid: 'user-svc',
      resourceVersion: '42',
      labels,
    },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.9.9',
      clusterIPs: ['10.96.9.9'],
      ports: [{ name: 'web', protocol: 'TCP', port: 8000, targetPort: 8000 }],
    },
  };
}

function setup() {
  const cluster = createFakeCluster();
  const snapshot = staticSnapshot();
  snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', endpoints(3, 1))]);
  const events = createMemoryEventRecorder();
  const logger = createMemoryLogger();
  const counts = new Map<string, number>();
  const reconcile = reconcilerFor(cluster, snapshot, {
    events,
    logger,
    metrics: { nameCollisions: (ns, name, n) => void counts.set(`${ns}/${name}`, n) },
  });
  return { cluster, snapshot, events, logger, counts, reconcile };
}

const ready = (cluster: FakeCluster) =>
  cluster.imports.get('shop/cart')?.status?.conditions?.find((c) => c.type === 'Ready');

describe('the cost of looking before creating', () => {
  it('one GET per object created (ServiceImport, Service, each slice), none once they exist', async () => {
    const { cluster, snapshot, reconcile } = setup();
    snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', endpoints(150, 1))]);
    await reconcile('shop/cart');
    expect(cluster.slices.size).toBe(2);
    expect(cluster.liveReads).toBe(4);
    await reconcile('shop/cart');
    expect(cluster.liveReads).toBe(4);
  });
});

describe('a user Service with the derived name', () => {
  it('is never modified; the import says why it is blocked, by condition, Event, metric and one log line', async () => {
    const { cluster, events, logger, counts, reconcile } = setup();
    const theirs = userService();
    cluster.services.set(`shop/${derived}`, structuredClone(theirs));

    const result = await reconcile('shop/cart');
    expect(cluster.services.get(`shop/${derived}`)).toEqual(theirs);
    expect(cluster.writeLog.filter((w) => w.includes(derived))).toEqual([]);
    expect(cluster.slices.size).toBe(0);
    expect(result?.requeueAfterMs).toBe(10_000);
    const si = cluster.imports.get('shop/cart');
    expect(si?.spec.ips).toBeUndefined();
    expect(ready(cluster)).toMatchObject({ status: 'False', reason: 'NameCollision' });
    expect(ready(cluster)?.message).toMatch(
      new RegExp(
        `^blocked: Service shop/${derived} exists and is not managed by cloudmap-mcs-import-agent`,
      ),
    );
    expect(events.about(`shop/${derived}`, 'NameCollision')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        regarding: expect.objectContaining({ kind: 'Service', uid: 'user-svc' }),
      }),
    ]);
    expect(events.about('shop/cart', 'NameCollision')).toHaveLength(1);
    expect(counts.get('shop/cart')).toBe(1);

    // Re-checks do not repeat the warning, nor write.
    const writes = cluster.writes;
    await reconcile('shop/cart');
    await reconcile('shop/cart');
    expect(cluster.writes).toBe(writes);
    expect(logger.entries.filter((e) => e.level === 'warn')).toHaveLength(1);
  });

  it('survives the unexport', async () => {
    const { cluster, snapshot, reconcile } = setup();
    const theirs = userService();
    cluster.services.set(`shop/${derived}`, structuredClone(theirs));
    await reconcile('shop/cart');
    snapshot.set('shop', 'cart', []);
    await reconcile('shop/cart');
    expect(cluster.imports.has('shop/cart')).toBe(false);
    expect(cluster.services.get(`shop/${derived}`)).toEqual(theirs);
  });

  it('once the user deletes it, the import converges on its own', async () => {
    const { cluster, counts, logger, reconcile } = setup();
    cluster.services.set(`shop/${derived}`, userService());
    await reconcile('shop/cart');
    cluster.services.delete(`shop/${derived}`);
    expect(await reconcile('shop/cart')).toBeUndefined();
    expect(cluster.services.get(`shop/${derived}`)?.metadata.labels).toMatchObject(ours);
    expect(cluster.imports.get('shop/cart')?.spec.ips).toEqual(['10.96.0.1']);
    expect(cluster.slices.size).toBe(1);
    expect(ready(cluster)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(counts.get('shop/cart')).toBe(0);
    expect(logger.find('name collision resolved: the import proceeds')).toHaveLength(1);
  });

  it('one carrying our label but no owner reference to our ServiceImport is not ours either', async () => {
    const { cluster, reconcile } = setup();
    const theirs = userService({ ...ours });
    cluster.services.set(`shop/${derived}`, structuredClone(theirs));
    await reconcile('shop/cart');
    expect(cluster.services.get(`shop/${derived}`)).toEqual(theirs);
    expect(ready(cluster)?.reason).toBe('NameCollision');
  });
});

describe('a user ServiceImport with the imported name', () => {
  const theirs: ServiceImportObject = {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: { name: 'cart', namespace: 'shop', uid: 'user-si', resourceVersion: '7' },
    spec: { type: 'ClusterSetIP', ports: [{ protocol: 'TCP', port: 81 }], ips: ['10.9.9.9'] },
    status: { clusters: [{ cluster: 'theirs' }] },
  };

  it('is not written (status included), nothing is created for it, and it outlives the unexport', async () => {
    const { cluster, snapshot, events, counts, reconcile } = setup();
    cluster.imports.set('shop/cart', structuredClone(theirs));
    expect(await reconcile('shop/cart')).toBeUndefined();
    expect(cluster.imports.get('shop/cart')).toEqual(theirs);
    expect(cluster.writes).toBe(0);
    expect(events.about('shop/cart', 'NameCollision')).toEqual([
      expect.objectContaining({
        type: 'Warning',
        regarding: expect.objectContaining({ kind: 'ServiceImport', name: 'cart', uid: 'user-si' }),
      }),
    ]);
    expect(counts.get('shop/cart')).toBe(1);
    snapshot.set('shop', 'cart', []);
    await reconcile('shop/cart');
    expect(cluster.imports.get('shop/cart')).toEqual(theirs);
    expect(cluster.writes).toBe(0);
  });
});

describe('a user EndpointSlice with the name of one of ours', () => {
  it('is left alone and reported; the import is not Ready', async () => {
    // Learn the slice name the import uses, then start over with a user's slice under it.
    const probe = setup();
    await probe.reconcile('shop/cart');
    const [sliceName] = [...probe.cluster.slices.values()].map((s) => s.metadata.name);
    const theirs: EndpointSliceObject = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: sliceName ?? '',
        namespace: 'shop',
        uid: 'user-slice',
        labels: { app: 'x' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.7.7.7'] }],
    };
    const { cluster, reconcile } = setup();
    cluster.slices.set(`shop/${sliceName ?? ''}`, structuredClone(theirs));
    expect((await reconcile('shop/cart'))?.requeueAfterMs).toBe(10_000);
    expect(cluster.slices.get(`shop/${sliceName ?? ''}`)).toEqual(theirs);
    expect(ready(cluster)).toMatchObject({ status: 'False', reason: 'NameCollision' });
    expect(ready(cluster)?.message).toContain(`EndpointSlice shop/${sliceName ?? ''}`);
  });
});
