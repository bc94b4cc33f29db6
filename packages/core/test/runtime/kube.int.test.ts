// The Kubernetes runtime against a real kube-apiserver of the harness (docs/harness.md):
// leader election on a real Lease, informer sync and events, Events,
// and cluster identity from the harness's ClusterProperties.
import { randomBytes } from 'node:crypto';
import {
  CoordinationV1Api,
  CoreV1Api,
  EventsV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isNotFound } from '../../src/runtime/api-errors.js';
import {
  createClusterIdentityWatcher,
  kubeClusterPropertySource,
} from '../../src/runtime/cluster-identity.js';
import { createEventRecorder, kubeEventSink } from '../../src/runtime/events.js';
import { createChecks } from '../../src/runtime/health.js';
import { waitForCacheSync } from '../../src/runtime/informer.js';
import {
  createKubeInformer,
  isMetadataStub,
  metadataStub,
  stripUnread,
} from '../../src/runtime/kube-informer.js';
import { createLeaderElector } from '../../src/runtime/leader-election.js';
import { createKubeLeaseStore, type LeaseStore } from '../../src/runtime/lease-store.js';
import { loadKubeConfig } from '../../src/runtime/kubeconfig.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';

interface E2e {
  kubeconfigs: string[];
  clusterNames: string[];
}
const ctx = (inject as (k: string) => unknown)('mcsE2e') as E2e;
const kc = loadKubeConfig(ctx.kubeconfigs[0]);
const core = kc.makeApiClient(CoreV1Api);
const ns = `core-runtime-${randomBytes(3).toString('hex')}`;

/** Server-side apply and delete of test objects (the agents write through their own writers). */
const objects = KubernetesObjectApi.makeApiClient(kc);
const applier = {
  apply: (obj: KubernetesObject) =>
    objects.patch(
      obj,
      undefined,
      undefined,
      'cloudmap-mcs-test',
      true,
      PatchStrategy.ServerSideApply,
    ),
  async delete(obj: KubernetesObject): Promise<void> {
    await objects.delete(obj).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  },
};

/** Polls until `check` holds (no timing assertion: the test timeout bounds it). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    if (await check()) return;
    if (i > 600) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: ns } } });
});
afterAll(async () => {
  await core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe('leader election on a real Lease', () => {
  it('one leader at a time; release hands over to the standby', async () => {
    const log: string[] = [];
    const make = (id: string) =>
      createLeaderElector({
        store: createKubeLeaseStore(kc, ns, 'agent'),
        identity: id,
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
        onStartedLeading: () => log.push(`${id} started`),
        onStoppedLeading: () => log.push(`${id} stopped`),
        logger: createMemoryLogger(),
      });
    const a = make('a');
    const aDone = a.run();
    await until(() => a.isLeader(), 'a to lead');
    const b = make('b');
    const bDone = b.run();
    await new Promise((r) => setTimeout(r, 2_000));
    expect(b.isLeader()).toBe(false);
    await a.stop();
    await aDone;
    await until(() => b.isLeader(), 'b to lead');
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'agent', namespace: ns });
    expect(lease.spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 1,
      leaseDurationSeconds: 4,
    });
    await b.stop();
    await bDone;
  });
});

describe('client-go leader election on a real Lease (ADR 0020)', () => {
  it('a killed leader is replaced within leaseDuration + retryPeriod; never two leaders', async () => {
    const LEASE_MS = 4_000;
    const RETRY_MS = 500;
    const terms: { id: string; from: number; to?: number }[] = [];
    let aKilled = false;
    const make = (id: string) => {
      const real = createKubeLeaseStore(kc, ns, 'failover');
      // SIGKILL as the API server sees it: nothing more arrives from a, nothing is released.
      const black = <T>(call: () => Promise<T>): Promise<T> =>
        id === 'a' && aKilled ? new Promise<T>(() => {}) : call();
      const store: LeaseStore = {
        description: real.description,
        get: () => black(() => real.get()),
        create: (r) => black(() => real.create(r)),
        update: (r) => black(() => real.update(r)),
      };
      return createLeaderElector({
        store,
        identity: id,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: 3_000,
        retryPeriodMs: RETRY_MS,
        onStartedLeading: (signal) => {
          const term: { id: string; from: number; to?: number } = { id, from: Date.now() };
          terms.push(term);
          signal.addEventListener('abort', () => (term.to = Date.now()));
        },
        onStoppedLeading: () => {},
        logger: createMemoryLogger(),
      });
    };
    const leases = kc.makeApiClient(CoordinationV1Api);
    const read = () => leases.readNamespacedLease({ name: 'failover', namespace: ns });
    const a = make('a');
    const aDone = a.run();
    await until(() => a.isLeader(), 'a to lead');
    const b = make('b');
    const bDone = b.run();
    // The leader renews every retry period: the Lease moves, the standby waits.
    const before = (await read()).metadata?.resourceVersion;
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await read()).metadata?.resourceVersion).not.toBe(before);
    expect(b.isLeader()).toBe(false);
    aKilled = true;
    const killedAt = Date.now();
    let both = false;
    await until(() => {
      if (a.isLeader() && b.isLeader()) both = true;
      return b.isLeader();
    }, 'b to take over');
    const failoverMs = terms.find((t) => t.id === 'b')!.from - killedAt;
    process.stdout.write(`leader failover on a real API server: ${String(failoverMs)} ms\n`);
    expect(both).toBe(false);
    // The bound plus what the API server's answers take.
    expect(failoverMs).toBeLessThanOrEqual(LEASE_MS + RETRY_MS + 500);
    const [ta, tb] = terms;
    expect(ta?.id).toBe('a');
    expect(ta?.to).toBeDefined();
    expect(ta!.to!).toBeLessThanOrEqual(tb!.from);
    const lease = await read();
    expect(lease.spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 1,
      leaseDurationSeconds: 4,
    });
    await aDone;
    await b.stop();
    await bDone;
  });
});

describe('informer, SSA and events', () => {
  it('syncs, sees SSA-applied changes and deletes, and records an Event', async () => {
    const seen: string[] = [];
    const informer = createKubeInformer<V1ConfigMap>({
      name: 'configmaps',
      kubeConfig: kc,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      list: () => core.listNamespacedConfigMap({ namespace: ns }),
      onEvent: (e, o) => {
        if (o.metadata?.name === 'cm') seen.push(`${e}:${o.data?.['k'] ?? ''}`);
      },
      logger: createMemoryLogger(),
    });
    informer.start();
    await waitForCacheSync([informer]);
    const cm = (v: string): KubernetesObject & { data: Record<string, string> } => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: ns },
      data: { k: v },
    });
    await applier.apply(cm('1'));
    await applier.apply(cm('1')); // no change: no new resourceVersion, no event
    await applier.apply(cm('2'));
    const live = await core.readNamespacedConfigMap({ name: 'cm', namespace: ns });
    expect(live.metadata?.managedFields?.map((f) => f.manager)).toContain('cloudmap-mcs-test');
    await applier.delete(cm('2'));
    await applier.delete(cm('2')); // absent is success
    await until(() => seen.includes('delete:2'), 'the delete event');
    expect(seen).toEqual(['add:1', 'update:2', 'delete:2']);
    await informer.stop();

    const recorder = createEventRecorder({
      sink: kubeEventSink(kc),
      controller: 'cloudmap-mcs.io/test',
      instance: 'int-test',
      logger: createMemoryLogger(),
    });
    recorder.record({
      regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'cm' },
      type: 'Warning',
      reason: 'TestReason',
      action: 'Test',
      note: 'hello',
    });
    const events = kc.makeApiClient(EventsV1Api);
    await until(
      async () =>
        (await events.listNamespacedEvent({ namespace: ns })).items.some(
          (e) => e.reason === 'TestReason',
        ),
      'the Event',
    );
  });
});

describe('informer caches keep what the transform keeps', () => {
  it('strips managedFields by default; stubs what the transform stubs, on list and on watch', async () => {
    const cm = (name: string, v: string): KubernetesObject & { data: Record<string, string> } => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, labels: { keep: name === 'full' ? 'yes' : 'no' } },
      data: { k: v },
    });
    // One object exists before the list, the other arrives through the watch.
    await applier.apply(cm('full', '1'));
    await applier.apply(cm('stub', '1'));
    const events: string[] = [];
    const informer = createKubeInformer<V1ConfigMap>({
      name: 'configmaps',
      kubeConfig: kc,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      labelSelector: 'keep',
      list: () => core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'keep' }),
      transform: (o) =>
        o.metadata?.labels?.['keep'] === 'yes' ? stripUnread(o) : metadataStub(o, { labels: true }),
      onEvent: (e, o) => events.push(`${e}:${o.metadata?.name ?? ''}:${o.data?.['k'] ?? '-'}`),
      logger: createMemoryLogger(),
    });
    informer.start();
    await waitForCacheSync([informer]);
    const listed = informer.get('full', ns);
    expect(listed?.data).toEqual({ k: '1' });
    expect(listed?.metadata?.managedFields).toBeUndefined();
    expect(isMetadataStub(listed)).toBe(false);
    const stub = informer.get('stub', ns);
    expect(isMetadataStub(stub)).toBe(true);
    expect(stub?.data).toBeUndefined();
    expect(stub?.metadata).toMatchObject({ name: 'stub', namespace: ns, labels: { keep: 'no' } });
    expect(stub?.metadata?.resourceVersion).toMatch(/^\d+$/);

    await applier.apply(cm('full', '2'));
    await applier.apply(cm('stub', '2'));
    await until(() => events.includes('update:stub:-'), 'the stub update');
    await until(() => informer.get('full', ns)?.data?.['k'] === '2', 'the full update');
    expect(informer.get('full', ns)?.metadata?.managedFields).toBeUndefined();
    expect(isMetadataStub(informer.get('stub', ns))).toBe(true);
    // The watch resumed from the stubs' resourceVersions: no relist, no restart.
    expect(informer.restarts).toBe(0);
    expect(events).toEqual(
      expect.arrayContaining(['add:full:1', 'add:stub:-', 'update:full:2', 'update:stub:-']),
    );
    await informer.stop();
  });
});

describe('cluster identity from the harness ClusterProperties', () => {
  it('reads v1beta1 and is ready', async () => {
    const readiness = createChecks();
    const logger = createMemoryLogger();
    const watcher = createClusterIdentityWatcher({
      source: kubeClusterPropertySource(kc, logger),
      flags: {},
      logger,
      readiness,
    });
    await watcher.start();
    expect(watcher.current()?.clusterId).toBe(ctx.clusterNames[0]);
    expect(watcher.current()?.clustersetId).toMatch(/.+/);
    expect(readiness.evaluate().ok).toBe(true);
    await watcher.stop();
  });
});
