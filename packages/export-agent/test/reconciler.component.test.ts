import { afterEach, describe, expect, it } from 'vitest';
import {
  Attr,
  encodeClusterExport,
  encodeHeartbeat,
  exportsDigest,
  HEARTBEAT_SERVICE_NAME,
  type ClusterExport,
} from '@cloudmap-mcs/core';
import type { FakeCloudMap } from '@cloudmap-mcs/core/testing';
import {
  clusterA,
  createFakeCloudMap,
  FakeK8s,
  startAgent,
  type Agent,
  converged,
  elapse,
} from './harness.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const KEY = 'shop/cart';
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

function setup(opts: Parameters<typeof startAgent>[2] = {}) {
  const fake = createFakeCloudMap();
  const k8s = new FakeK8s(clusterA);
  const agent = startAgent(k8s, fake, opts);
  agents.push(agent);
  return { fake, k8s, agent };
}

function exportCart(k8s: FakeK8s, ips = ['10.0.0.1', '10.0.0.2']) {
  k8s.apply('service', service('shop', 'cart'));
  k8s.apply(
    'slice',
    slice(
      'shop',
      'cart',
      'cart-abc',
      ips.map((ip) => ({ ip, node: 'n1' })),
    ),
  );
  k8s.apply('export', serviceExport('shop', 'cart'));
}

const own = (fake: FakeCloudMap) =>
  fake.instancesOf('shop', 'cart').filter((i) => i.attributes[Attr.ClusterId] === 'cluster-a');
const ownIps = (fake: FakeCloudMap) =>
  own(fake)
    .filter((i) => i.attributes[Attr.Record] === 'endpoint')
    .map((i) => `${i.attributes[Attr.Ipv4]}:${i.attributes[Attr.Ready]}`)
    .sort();

const expectedExport = (ips: string[]): ClusterExport => ({
  namespace: 'shop',
  name: 'cart',
  cluster: clusterA,
  hasExportRecord: true,
  properties: {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'web' }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    exportedLabels: {},
    exportedAnnotations: {},
    exportCreatedAtMs: Date.parse('2026-01-01T00:00:00Z'),
  },
  endpoints: ips.map((address) => ({
    address,
    addressType: 'IPv4' as const,
    ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: 'n1',
  })),
});

describe('export reconciler over the fake Cloud Map', () => {
  it('exports a Service: exact records, finalizer, Valid/Ready/Conflict, heartbeat', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    const want = encodeClusterExport(expectedExport(['10.0.0.1', '10.0.0.2'])).instances;
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    expect([...own(fake)].sort(byId)).toEqual([...want].sort(byId));
    expect(fake.namespaceByName('shop')?.type).toBe('HTTP');
    expect(fake.tagsOf(fake.serviceByName('shop', 'cart')!.id)).toEqual({
      'cloudmap-mcs:managed-by': 'export-agent',
    });
    const se = k8s.exports.get(KEY)!;
    expect(se.metadata.finalizers).toEqual(['cloudmap-mcs.io/export-records']);
    expect(se.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Valid', 'True', 'Valid'],
      ['Ready', 'True', 'Exported'],
      ['Conflict', 'False', 'NoConflicts'],
    ]);
    await converged(() =>
      expect(
        fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME).map((i) => i.attributes[Attr.Record]),
      ).toEqual(['heartbeat']),
    );
  });

  it('reflects scaling and readiness flips, writing only the changed instances', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s);
    await converged(() => expect(ownIps(fake)).toEqual(['10.0.0.1:true', '10.0.0.2:true']));
    await converged(() => expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1));
    fake.resetCounters();
    k8s.apply(
      'slice',
      slice('shop', 'cart', 'cart-abc', [
        { ip: '10.0.0.1', node: 'n1' },
        { ip: '10.0.0.2', node: 'n1', ready: false, terminating: true },
        { ip: '10.0.0.3', node: 'n1' },
      ]),
    );
    await converged(() =>
      expect(ownIps(fake)).toEqual(['10.0.0.1:true', '10.0.0.2:false', '10.0.0.3:true']),
    );
    expect(fake.calls('registerInstance')).toBe(2);
    k8s.apply('slice', slice('shop', 'cart', 'cart-abc', [{ ip: '10.0.0.3', node: 'n1' }]));
    await converged(() => expect(ownIps(fake)).toEqual(['10.0.0.3:true']));
    expect(fake.calls('deregisterInstance')).toBe(2);
  });

  it('a resync does not list the namespace again; a service deleted outside the agent is created again', async () => {
    const { fake, k8s } = setup({ resyncMs: 60_000 });
    exportCart(k8s);
    await converged(() => expect(ownIps(fake)).toEqual(['10.0.0.1:true', '10.0.0.2:true']));
    await converged(() => expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1));
    fake.resetCounters();
    await elapse(180_000, 1_000); // three resyncs and heartbeat renewals, past the 30 s cache
    expect(fake.calls('listServices')).toBe(0);
    expect(fake.calls('discoverInstances')).toBeGreaterThanOrEqual(3); // the resyncs still read
    // Someone deletes the service (its instances first, as Cloud Map requires).
    const svc = fake.serviceByName('shop', 'cart')!;
    for (const i of fake.instancesOf('shop', 'cart')) await fake.deregisterInstance(svc.id, i.id);
    await fake.deleteService(svc.id);
    await elapse(70_000, 1_000); // the next resync finds it gone, then the agent recreates it
    await converged(() => expect(ownIps(fake)).toEqual(['10.0.0.1:true', '10.0.0.2:true']));
    expect(fake.serviceByName('shop', 'cart')?.id).not.toBe(svc.id);
  });

  it('keeps Ready=True through endpoint changes: no status write while in sync', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    await converged(() => expect(fake.operations.every((o) => o.status === 'SUCCESS')).toBe(true));
    const written: string[] = [];
    const write = k8s.writeConditions.bind(k8s);
    k8s.writeConditions = async (se, conditions) => {
      written.push(conditions.map((c) => `${c.type}=${c.status}/${c.reason}`).join(' '));
      await write(se, conditions);
    };
    for (const ips of [['10.0.0.1'], ['10.0.0.1', '10.0.0.4'], ['10.0.0.5']]) {
      exportCart(k8s, ips);
      await converged(() => expect(ownIps(fake)).toEqual(ips.map((ip) => `${ip}:true`)));
    }
    // Let the operations' completions requeue and reconcile once more.
    await converged(() => expect(fake.operations.every((o) => o.status === 'SUCCESS')).toBe(true));
    await elapse(100);
    expect(written).toEqual([]);
    expect(k8s.condition(KEY, 'Ready')).toMatchObject({ status: 'True', reason: 'Exported' });
  });

  it('deleting the ServiceExport removes only this cluster’s records, then the finalizer', async () => {
    const { fake, k8s } = setup();
    const other = encodeClusterExport({
      ...expectedExport(['10.0.0.1']),
      cluster: { clusterId: 'cluster-b', clustersetId: 'set-1' },
    }).instances;
    const ns = fake.seedNamespace('shop');
    const svc = fake.seedService(ns.name, 'cart');
    for (const i of other) fake.seedInstance(svc.id, i.id, i.attributes);
    exportCart(k8s);
    await converged(() => expect(own(fake)).toHaveLength(3));
    k8s.delete('export', KEY);
    await converged(() => expect(k8s.exports.has(KEY)).toBe(false));
    expect(own(fake)).toEqual([]);
    expect(
      fake
        .instancesOf('shop', 'cart')
        .map((i) => i.id)
        .sort(),
    ).toEqual(other.map((i) => i.id).sort());
  });

  it('a reconcile on a cache still holding the deleted ServiceExport is a clean no-op', async () => {
    const { fake, k8s, agent } = setup();
    exportCart(k8s);
    await converged(() => expect(own(fake)).toHaveLength(3));
    k8s.delete('export', KEY);
    const stale = k8s.serviceExport('shop', 'cart')!; // deletionTimestamp set, finalizer on
    await converged(() => expect(k8s.exports.has(KEY)).toBe(false));
    // The informer has not seen the deletion yet: the next reconcile reads the old object and
    // removes a finalizer that is gone with its object (the API server answers 404).
    k8s.serviceExport = () => structuredClone(stale);
    await expect(agent.controller.reconciler.reconcile(KEY)).resolves.toBeUndefined();
  });

  it('deleting the Service un-exports with Valid=False/NoService', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s);
    await converged(() => expect(own(fake)).toHaveLength(3));
    k8s.delete('service', KEY);
    await converged(() => expect(k8s.condition(KEY, 'Valid')?.reason).toBe('NoService'));
    await converged(() => expect(own(fake)).toEqual([]));
    expect(k8s.condition(KEY, 'Ready')).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(k8s.events.map((e) => e.reason)).toContain('NoService');
  });

  it('refuses ExternalName with Valid=False/InvalidServiceType and writes nothing', async () => {
    const { fake, k8s } = setup();
    k8s.apply(
      'service',
      service('shop', 'cart', { type: 'ExternalName', externalName: 'x.example.com' } as never),
    );
    k8s.apply('export', serviceExport('shop', 'cart'));
    await converged(() => expect(k8s.condition(KEY, 'Valid')?.reason).toBe('InvalidServiceType'));
    expect(fake.writes).toBe(0);
  });

  it('when RegisterInstance first fails, it eventually registers', async () => {
    const { fake, k8s } = setup();
    fake.failNext('registerInstance', 'InvalidInput', 3);
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(own(fake)).toHaveLength(3);
    expect(fake.failures('registerInstance')).toBe(3);
  });

  it('logs under the harness reconcile id: its error line and the status write share it', async () => {
    const { fake, k8s, agent } = setup();
    fake.failNext('registerInstance', 'InvalidInput', 1);
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    const [failed] = agent.logger.find('reconcile failed');
    expect(failed?.fields).toMatchObject({ controller: 'serviceexport', key: KEY });
    const id = failed?.fields['reconcileId'];
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    const written = agent.logger
      .find('status written')
      .filter((e) => e.fields['reconcileId'] === id);
    expect(written.map((e) => e.fields)).toEqual([
      { controller: 'serviceexport', key: KEY, reconcileId: id, outcome: 'failed' },
    ]);
  });

  it('when a register operation ends FAIL, it registers again', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop');
    fake.failNextOperations(2);
    exportCart(k8s);
    await converged(() => expect(own(fake)).toHaveLength(3));
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
  });

  it('reports a DNS_PUBLIC namespace as Ready=False/Failed', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PUBLIC');
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Failed'));
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(/public DNS namespace/);
    expect(fake.calls('createService')).toBe(0);
  });

  it('reports annotations beyond Cloud Map limits and writes nothing', async () => {
    const { fake, k8s } = setup();
    k8s.apply('service', service('shop', 'cart'));
    k8s.apply(
      'export',
      serviceExport('shop', 'cart', undefined, { exportedAnnotations: { a: 'x'.repeat(9000) } }),
    );
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Failed'));
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(/5000/);
    expect(fake.calls('registerInstance')).toBe(0);
    expect(k8s.events.map((e) => e.reason)).toEqual(['ExportFailed']);
  });

  it('one failure, one Event, even when the cache lags behind the status write', async () => {
    const { fake, k8s, agent } = setup();
    k8s.holdStatus(); // every reconcile sees the ServiceExport without our status
    k8s.apply('service', service('shop', 'cart'));
    k8s.apply(
      'export',
      serviceExport('shop', 'cart', undefined, { exportedAnnotations: { a: 'x'.repeat(9000) } }),
    );
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Failed'));
    const writes = k8s.statusWrites;
    agent.controller.enqueue(KEY); // e.g. an EndpointSlice event, on the stale view
    await converged(() => expect(k8s.statusWrites).toBeGreaterThan(writes));
    k8s.releaseStatus();
    await elapse(50);
    expect(k8s.events.map((e) => e.reason)).toEqual(['ExportFailed']);
    expect(fake.calls('registerInstance')).toBe(0);
  });

  it('raises Conflict with the reason and the older cluster as winner', async () => {
    const { fake, k8s } = setup();
    const older = expectedExport(['10.1.0.1']);
    older.cluster = { clusterId: 'cluster-b', clustersetId: 'set-1' };
    older.properties = {
      ...older.properties,
      exportCreatedAtMs: 1_000,
      ports: [{ name: 'http', protocol: 'TCP', port: 81 }],
    };
    older.endpoints[0]!.ports = [{ name: 'http', protocol: 'TCP', port: 8080 }];
    const ns = fake.seedNamespace('shop');
    const svc = fake.seedService(ns.name, 'cart');
    for (const i of encodeClusterExport(older).instances)
      fake.seedInstance(svc.id, i.id, i.attributes);
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Conflict')?.status).toBe('True'));
    expect(k8s.condition(KEY, 'Conflict')).toMatchObject({
      reason: 'PortConflict',
      message:
        'Conflicting ports. Using the oldest service export, in "cluster-b". 1/2 clusters disagree.',
    });
    expect(k8s.events.filter((e) => e.reason === 'ExportConflict')).toHaveLength(1);
  });

  it('follows another cluster exporting and un-exporting without a local event (peer watch)', async () => {
    // Resync an hour away: only the revision check can bring the other cluster's change in.
    const { fake, k8s } = setup({ resyncMs: 3_600_000, peerCheckMs: 20 });
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(k8s.condition(KEY, 'Conflict')?.status).toBe('False');
    const newer = expectedExport(['10.2.0.1']);
    newer.cluster = { clusterId: 'cluster-b', clustersetId: 'set-1' };
    newer.properties = {
      ...newer.properties,
      exportCreatedAtMs: Date.parse('2026-01-02T00:00:00Z'),
      type: 'Headless',
    };
    const svc = fake.serviceByName('shop', 'cart')!;
    const theirs = encodeClusterExport(newer).instances;
    for (const i of theirs) fake.seedInstance(svc.id, i.id, i.attributes);
    await converged(() =>
      expect(k8s.condition(KEY, 'Conflict')).toMatchObject({
        status: 'True',
        reason: 'TypeConflict',
        message:
          'Conflicting type. Using the oldest service export, in "cluster-a". 1/2 clusters disagree.',
      }),
    );
    for (const i of theirs) await fake.deregisterInstance(svc.id, i.id);
    await converged(() =>
      expect(k8s.condition(KEY, 'Conflict')).toMatchObject({
        status: 'False',
        reason: 'NoConflicts',
      }),
    );
    expect(k8s.condition(KEY, 'Ready')).toMatchObject({ status: 'True', reason: 'Exported' });
  });

  it('a restart with nothing changed makes zero Cloud Map writes and zero status writes', async () => {
    const { fake, k8s, agent } = setup();
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    await converged(() => expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1));
    await agent.stop();
    agents.splice(agents.indexOf(agent), 1);
    fake.resetCounters();
    const statusWrites = k8s.statusWrites;
    const again = startAgent(k8s, fake);
    agents.push(again);
    await converged(() => expect(fake.calls('discoverInstances')).toBeGreaterThan(1));
    await again.controller.stop();
    expect(fake.writes).toBe(0);
    expect(k8s.statusWrites).toBe(statusWrites);
  });

  it('a restart after a missed delete removes the records', async () => {
    const { fake, k8s, agent } = setup();
    exportCart(k8s);
    await converged(() => expect(own(fake)).toHaveLength(3));
    await converged(() => expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1));
    await agent.stop();
    agents.splice(agents.indexOf(agent), 1);
    // Deleted while the agent was down, finalizer stripped by hand: no object left at all.
    k8s.exports.delete(KEY);
    k8s.services.delete(KEY);
    agents.push(startAgent(k8s, fake));
    await converged(() => expect(own(fake)).toEqual([]));
  });
});

describe('export reconciler: refusals and heartbeats', () => {
  it('shows a Cloud Map refusal as Ready=False/Failed with an event, and recovers', async () => {
    const { fake, k8s } = setup();
    fake.failAlways('registerInstance', 'ResourceLimitExceeded');
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Failed'));
    expect(k8s.condition(KEY, 'Ready')?.message).toMatch(
      /^Cloud Map refused registerInstance: ResourceLimitExceeded/,
    );
    expect(k8s.events.map((e) => e.reason)).toContain('ExportFailed');
    fake.clearFaults('registerInstance');
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(own(fake)).toHaveLength(3);
  });

  it('renews the heartbeat every period and removes it when the namespace has no export left', async () => {
    let now = 1_000_000;
    const { fake, k8s } = setup({ heartbeatPeriodMs: 90, wallNow: () => now });
    exportCart(k8s);
    const renewedAt = () =>
      fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)[0]?.attributes[Attr.HeartbeatRenewedAt];
    await converged(() => expect(renewedAt()).toBe('1000000'));
    now += 89;
    await elapse(100);
    expect(renewedAt()).toBe('1000000');
    now += 1;
    await converged(() => expect(renewedAt()).toBe('1000090'));
    k8s.delete('export', KEY);
    await converged(() => expect(fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toEqual([]));
  });

  it("renews at once over a predecessor's heartbeat ahead of its clock, then on its own period", async () => {
    // The predecessor's clock ran 90 s ahead of ours (or ours runs 90 s behind): its renewal
    // looks "in the future". Importers judge liveness by when they see the value change, so
    // waiting for our clock to pass it would leave them without a renewal for 90 s + a period.
    let now = 1_000_000;
    const fake = createFakeCloudMap();
    fake.seedNamespace('shop');
    const svc = fake.seedService('shop', HEARTBEAT_SERVICE_NAME);
    const ahead = encodeHeartbeat({
      cluster: clusterA,
      renewedAtMs: now + 90_000,
      periodSeconds: 30,
      exportsDigest: exportsDigest(['cart']),
    });
    await fake.registerInstance(svc.id, ahead.id, ahead.attributes);
    const k8s = new FakeK8s(clusterA);
    agents.push(startAgent(k8s, fake, { heartbeatPeriodMs: 90, wallNow: () => now }));
    exportCart(k8s);
    const renewedAt = () =>
      fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)[0]?.attributes[Attr.HeartbeatRenewedAt];
    await converged(() => expect(renewedAt()).toBe('1000000'));
    now += 90;
    await converged(() => expect(renewedAt()).toBe('1000090'));
  });

  it('withdraws a feed its predecessor stated at once when it writes none (issue 31)', async () => {
    // A restart with --change-feed=false: the stored heartbeat, renewed a moment ago, still
    // states the old process's feed, so readers would keep trusting a record nobody writes
    // until the next renewal a period later. Not due by age nor by exports: only the feed.
    const now = 1_000_000;
    const fake = createFakeCloudMap();
    const k8s = new FakeK8s(clusterA);
    const first = startAgent(k8s, fake, { wallNow: () => now });
    exportCart(k8s);
    const heartbeat = () => fake.instancesOf('shop', HEARTBEAT_SERVICE_NAME)[0];
    await converged(() => expect(heartbeat()).toBeDefined());
    await first.stop();
    const stored = heartbeat();
    const serviceId = fake.serviceByName('shop', HEARTBEAT_SERVICE_NAME)?.id ?? '';
    if (stored === undefined) throw new Error('no heartbeat');
    fake.seedInstance(serviceId, stored.id, {
      ...stored.attributes,
      [Attr.FeedEpoch]: 'old1',
      [Attr.FeedSeq]: '7',
    });
    agents.push(startAgent(k8s, fake, { wallNow: () => now }));
    await converged(() => expect(heartbeat()?.attributes[Attr.FeedEpoch]).toBeUndefined(), {
      withinMs: 5_000,
    });
    expect(heartbeat()?.attributes[Attr.FeedSeq]).toBeUndefined();
  });
});

describe('export reconciler: namespaces and identity', () => {
  it('uses an existing DNS_PRIVATE namespace as is', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    exportCart(k8s);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(fake.calls('createHttpNamespace')).toBe(0);
    expect(fake.namespaceByName('shop')?.type).toBe('DNS_PRIVATE');
    expect(own(fake)).toHaveLength(3);
  });

  it('does nothing without an identity, and exports once the ClusterProperties appear', async () => {
    const { fake, k8s, agent } = setup();
    k8s.cluster = undefined;
    exportCart(k8s);
    await elapse(100);
    // (The start-up sweep may have listed namespaces; nothing else happens.)
    expect(fake.writes).toBe(0);
    expect(fake.calls('discoverInstances')).toBe(0);
    expect(k8s.statusWrites).toBe(0);
    expect(k8s.exports.get(KEY)?.metadata.finalizers).toBeUndefined();
    k8s.cluster = clusterA;
    // What a ClusterProperty event does (watches.ts): every export's key.
    for (const key of k8s.serviceExportKeys()) agent.controller.enqueue(key);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
  });
});
