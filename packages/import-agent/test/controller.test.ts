import {
  bindWatches,
  createAddressPolicy,
  createEventHub,
  derivedServiceName,
  encodeHeartbeat,
  HEARTBEAT_SERVICE_NAME,
  noopControllerMetrics,
  noopLogger,
  type Logger,
} from '@cloudmap-mcs/core';
import {
  createFakeCloudMap,
  createMemoryLogger,
  drainQueue,
  type FakeCloudMap,
  FakeClock,
} from '@cloudmap-mcs/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createImportController, type ImportController } from '../src/controller.js';
import { importWatches } from '../src/watches.js';
import {
  CLUSTERSET,
  endpoints,
  exportOf,
  heartbeat,
  publish,
  unpublish,
} from './cloudmap-fixtures.js';
import { createFakeCluster, type FakeCluster } from './fake-cluster.js';

const periods = {
  slowMs: 30_000,
  fastMs: 2_000,
  resyncMs: 300_000,
  jitter: 0,
  maxBackoffMs: 60_000,
};
const running: ImportController[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});

async function setup(
  cm: FakeCloudMap = createFakeCloudMap(),
  cluster: FakeCluster = createFakeCluster(),
  wallStart = 1_000_000,
  extra: {
    logger?: Logger;
    refused?: (reason: string) => void;
    reconciled?: (outcome: string) => void;
    localClusterId?: string;
  } = {},
) {
  const clock = new FakeClock();
  const state = { wall: wallStart };
  const ctl = createImportController({
    cloudMap: cm,
    sources: cluster,
    writer: cluster,
    clock,
    logger: extra.logger ?? noopLogger,
    trust: {
      clustersetId: CLUSTERSET,
      addresses: createAddressPolicy([]),
      ...(extra.localClusterId === undefined ? {} : { localClusterId: extra.localClusterId }),
    },
    periods,
    heartbeatTtlMs: 60_000,
    workers: 2,
    now: () => state.wall,
    metrics: {
      ...(extra.refused === undefined ? {} : { refused: extra.refused }),
    },
    ...(extra.reconciled === undefined
      ? {}
      : {
          controllerMetrics: {
            ...noopControllerMetrics,
            reconciled: (_controller: string, result: string) => extra.reconciled?.(result),
          },
        }),
  });
  running.push(ctl);
  // Fake time in 1 s steps; after each, everything the step started (poller reads of the fake,
  // the reconciles they enqueue) runs to the end: drainQueue fails loudly if it never does.
  const drain = () => drainQueue(ctl.queue);
  const tick = async (ms: number): Promise<void> => {
    clock.advance(0);
    await drain();
    for (let left = ms; left > 0; left -= Math.min(left, 1_000)) {
      clock.advance(Math.min(left, 1_000));
      state.wall += Math.min(left, 1_000);
      await drain();
    }
  };
  let started = false;
  void ctl.start().then(() => (started = true));
  for (let i = 0; i < 100 && !started; i++) await tick(100);
  expect(started).toBe(true);
  await tick(3_000);
  return { cm, cluster, clock, ctl, tick, state };
}

const derived = derivedServiceName('shop', 'cart');
const slicesOf = (cluster: FakeCluster) =>
  [...cluster.slices.values()].map((s) => ({
    cluster: s.metadata.labels?.['multicluster.kubernetes.io/source-cluster'],
    n: s.endpoints.length,
  }));
const addresses = (cluster: FakeCluster) =>
  [...cluster.slices.values()]
    .flatMap((s) =>
      s.endpoints.map(
        (e) =>
          `${s.metadata.labels?.['multicluster.kubernetes.io/source-cluster'] ?? ''}:${e.addresses[0] ?? ''}`,
      ),
    )
    .sort();

function failEverything(cm: FakeCloudMap): void {
  for (const op of [
    'listNamespaces',
    'listServices',
    'discoverInstances',
    'discoverInstancesRevision',
  ] as const) {
    cm.failAlways(op, 'ServiceUnavailable');
  }
}

describe('import controller over the fake Cloud Map', () => {
  it('an export becomes a ServiceImport whose IP is the derived Service ClusterIP, with labelled slices', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(3, 1)));
    const { cluster } = await setup(cm);
    const si = cluster.imports.get('shop/cart');
    const svc = cluster.services.get(`shop/${derived}`);
    expect(svc?.spec.clusterIPs).toEqual(['10.96.0.1']);
    expect(si?.spec).toMatchObject({
      type: 'ClusterSetIP',
      ips: ['10.96.0.1'],
      ipFamilies: ['IPv4'],
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    });
    expect(si?.status?.clusters).toEqual([{ cluster: 'c1' }]);
    expect(si?.status?.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
    });
    const [slice] = [...cluster.slices.values()];
    expect(slice?.metadata.labels).toMatchObject({
      'kubernetes.io/service-name': derived,
      'multicluster.kubernetes.io/service-name': 'cart',
      'multicluster.kubernetes.io/source-cluster': 'c1',
      'endpointslice.kubernetes.io/managed-by': 'cloudmap-mcs-import-agent',
    });
    // Every label value must be one the API server accepts (no '/', ≤63).
    for (const value of Object.values(slice?.metadata.labels ?? {})) {
      expect(value).toMatch(/^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/);
    }
    expect(slice?.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
    expect(svc?.spec.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80, targetPort: 80 }]);
  });

  it('two clusters with overlapping pod IPs merge; port and type conflicts give the union and the oldest type', async () => {
    const cm = createFakeCloudMap();
    await publish(
      cm,
      exportOf('c1', 'shop', 'cart', endpoints(2, 1), {
        exportCreatedAtMs: 100,
        type: 'ClusterSetIP',
      }),
    );
    await publish(
      cm,
      exportOf('c2', 'shop', 'cart', endpoints(2, 1), {
        exportCreatedAtMs: 200,
        type: 'Headless',
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'admin', protocol: 'TCP', port: 9000 },
        ],
      }),
    );
    const { cluster } = await setup(cm);
    expect(addresses(cluster)).toEqual([
      'c1:10.1.0.1',
      'c1:10.1.0.2',
      'c2:10.1.0.1',
      'c2:10.1.0.2',
    ]);
    const si = cluster.imports.get('shop/cart');
    expect(si?.spec.type).toBe('ClusterSetIP');
    expect(si?.spec.ports.map((p) => p.port)).toEqual([80, 9000]);
    expect(si?.status?.conditions?.[0]?.message).toBe(
      'imported from 2 cluster(s); conflicts (PortConflict, TypeConflict) resolved by the oldest export, from c1',
    );
  });

  it('250 endpoints → 3 slices and back to 1; headless has no IPs', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(250, 1)));
    const { cluster, tick } = await setup(cm);
    expect(
      slicesOf(cluster)
        .map((s) => s.n)
        .sort(),
    ).toEqual([100, 100, 50]);
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(5, 1)));
    await tick(3_000);
    expect(slicesOf(cluster)).toEqual([{ cluster: 'c1', n: 5 }]);
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(5, 1), { type: 'Headless' }));
    await tick(4_000);
    expect(cluster.imports.get('shop/cart')?.spec).not.toHaveProperty('ips');
    expect(cluster.services.get(`shop/${derived}`)?.spec.clusterIP).toBe('None');
    expect(slicesOf(cluster)).toEqual([{ cluster: 'c1', n: 5 }]);
  });

  it('unexporting everywhere deletes the import, the derived Service and the slices', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(2, 2)));
    const { cluster, tick } = await setup(cm);
    await unpublish(cm, 'shop', 'cart', 'c1');
    await tick(3_000);
    expect(cluster.imports.has('shop/cart')).toBe(true);
    expect(addresses(cluster)).toEqual(['c2:10.2.0.1', 'c2:10.2.0.2']);
    await unpublish(cm, 'shop', 'cart', 'c2');
    await tick(3_000);
    expect(cluster.imports.size + cluster.services.size + cluster.slices.size).toBe(0);
  });

  it('a cluster whose heartbeat is older than the TTL loses its endpoints, not the import', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(2, 2)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    await heartbeat(cm, 'shop', 'c2', 1_000_000);
    const { cluster, tick, state } = await setup(cm);
    expect(addresses(cluster)).toHaveLength(4);
    // c2 keeps renewing, c1 stops.
    for (let i = 0; i < 4; i++) {
      await heartbeat(cm, 'shop', 'c2', state.wall);
      await tick(20_000);
    }
    expect(addresses(cluster)).toEqual(['c2:10.2.0.1', 'c2:10.2.0.2']);
    expect(cluster.imports.get('shop/cart')?.status?.conditions?.[0]?.message).toMatch(
      /endpoints of c1 removed/,
    );
    await heartbeat(cm, 'shop', 'c1', state.wall);
    await tick(3_000);
    expect(addresses(cluster)).toHaveLength(4);
  });

  it('the only cluster of a namespace goes stale with no other heartbeat moving, and comes back', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    const { cluster, tick, state } = await setup(cm);
    expect(addresses(cluster)).toHaveLength(2);
    await tick(90_000); // no renewal at all: past the TTL (60 s), dropped by the requeue
    expect(addresses(cluster)).toEqual([]);
    await heartbeat(cm, 'shop', 'c1', state.wall); // back: stale -> live is a change
    await tick(5_000);
    expect(addresses(cluster)).toHaveLength(2);
  });

  it('a heartbeat renewal that keeps every cluster live re-runs no import; a cluster coming back does', async () => {
    const cm = createFakeCloudMap();
    for (const name of ['cart', 'pay', 'ship'])
      await publish(cm, exportOf('c1', 'shop', name, endpoints(2, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    await heartbeat(cm, 'shop', 'c2', 1_000_000);
    const outcomes: string[] = [];
    const { cluster, tick, state } = await setup(cm, createFakeCluster(), 1_000_000, {
      reconciled: (outcome) => outcomes.push(outcome),
    });
    expect([...cluster.imports.keys()].sort()).toEqual(['shop/cart', 'shop/pay', 'shop/ship']);
    outcomes.length = 0;
    // Both clusters renew every 10 s for 40 s (TTL 60 s): every cluster stays live.
    for (let i = 0; i < 4; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall);
      await heartbeat(cm, 'shop', 'c2', state.wall);
      await tick(10_000);
    }
    expect(outcomes).toEqual([]);
    // c2 stops renewing and goes stale (it exports nothing here), then comes back: that
    // changes which clusters are live, so every import of the namespace is looked at again.
    for (let i = 0; i < 8; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall);
      await tick(10_000);
    }
    outcomes.length = 0;
    await heartbeat(cm, 'shop', 'c2', state.wall);
    await tick(10_000);
    expect(outcomes.length).toBeGreaterThanOrEqual(3);
    expect(addresses(cluster)).toHaveLength(6);
  });

  it('an exporter clock 90 s behind or ahead loses no endpoint: liveness is judged on our clock', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(2, 2)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000 - 90_000);
    await heartbeat(cm, 'shop', 'c2', 1_000_000 + 90_000);
    const { cluster, tick, state } = await setup(cm);
    let fewest = addresses(cluster).length;
    expect(fewest).toBe(4);
    // Both renew every 20 s on their own clocks for 5 minutes (TTL 60 s).
    for (let i = 0; i < 15; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall - 90_000);
      await heartbeat(cm, 'shop', 'c2', state.wall + 90_000);
      await tick(20_000);
      fewest = Math.min(fewest, addresses(cluster).length);
    }
    expect(fewest).toBe(4);
    // c2 (90 s ahead) stopped 20 s ago: stale one TTL after its last change was read, not
    // 90 s later.
    for (let i = 0; i < 2; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall - 90_000);
      await tick(17_000);
    }
    expect(addresses(cluster)).toHaveLength(4); // 54 s
    await heartbeat(cm, 'shop', 'c1', state.wall - 90_000);
    await tick(12_000); // 66 s: TTL, + the heartbeat check and slack
    expect(addresses(cluster)).toEqual(['c1:10.1.0.1', 'c1:10.1.0.2']);
  });

  it('a heartbeat instance whose id names another cluster keeps nothing alive and is refused', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    // A forged extra instance claiming c1, renewed "five years from now".
    const hbService = cm.serviceByName('shop', HEARTBEAT_SERVICE_NAME)!;
    const forged = encodeHeartbeat({
      cluster: { clusterId: 'c1', clustersetId: CLUSTERSET },
      renewedAtMs: 1_000_000 + 5 * 365 * 86_400_000,
    });
    await cm.registerInstance(hbService.id, 'forged-c1-heartbeat', forged.attributes);
    const logger = createMemoryLogger();
    const counted: string[] = [];
    const { cluster, tick, state } = await setup(cm, createFakeCluster(), 1_000_000, {
      logger,
      refused: (reason) => counted.push(reason),
    });
    expect(addresses(cluster)).toHaveLength(2);
    for (let i = 0; i < 3; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall);
      await tick(10_000);
    }
    const lastRenewal = state.wall;
    await heartbeat(cm, 'shop', 'c1', lastRenewal); // then c1's agent dies
    await tick(57_000);
    expect(addresses(cluster)).toHaveLength(2);
    await tick(6_000); // TTL 60 s after the last renewal, + the heartbeat check and slack
    expect(addresses(cluster)).toEqual([]);
    expect(counted).toContain('invalid-instance');
    expect(logger.find('refused cloud map record').map((l) => l.fields['subject'])).toEqual([
      `shop/${HEARTBEAT_SERVICE_NAME} - forged-c1-heartbeat`,
    ]);
  });

  it('a Cloud Map outage keeps the imports and says so; nothing is deleted', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(4, 1)));
    const { cluster, tick } = await setup(cm);
    for (const op of [
      'listNamespaces',
      'listServices',
      'discoverInstances',
      'discoverInstancesRevision',
    ] as const) {
      cm.failAlways(op, 'ServiceUnavailable');
    }
    await tick(120_000);
    expect(addresses(cluster)).toHaveLength(4);
    expect(cluster.writeLog.filter((w) => w.startsWith('delete'))).toEqual([]);
    expect(cluster.imports.get('shop/cart')?.status?.conditions?.[0]?.message).toMatch(
      /Cloud Map unreachable/,
    );
    cm.clearFaults();
    await tick(120_000);
    expect(cluster.imports.get('shop/cart')?.status?.conditions?.[0]?.message).not.toMatch(
      /unreachable/,
    );
  });

  it('an importer-side outage longer than the TTL drops no endpoint; it converges one fast period after', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(3, 1)));
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(2, 2)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    await heartbeat(cm, 'shop', 'c2', 1_000_000);
    const { cluster, tick, state } = await setup(cm);
    expect(addresses(cluster)).toHaveLength(5);
    cluster.writeLog.length = 0;
    failEverything(cm);
    // 10 minutes (TTL 60 s) during which both exporters stay alive and keep renewing, but
    // this importer cannot read any of it.
    let fewest = Infinity;
    for (let i = 0; i < 60; i++) {
      await heartbeat(cm, 'shop', 'c1', state.wall);
      await heartbeat(cm, 'shop', 'c2', state.wall);
      await tick(10_000);
      fewest = Math.min(fewest, addresses(cluster).length);
    }
    expect(fewest).toBe(5);
    expect(cluster.writeLog.filter((w) => w.startsWith('delete'))).toEqual([]);
    // c2 changed as the outage lifted; c1 still alive.
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(3, 2)));
    await heartbeat(cm, 'shop', 'c1', state.wall);
    await heartbeat(cm, 'shop', 'c2', state.wall);
    cm.clearFaults();
    await tick(periods.fastMs);
    expect(addresses(cluster)).toHaveLength(6);
    expect(cluster.imports.get('shop/cart')?.status?.conditions?.[0]?.message).not.toMatch(
      /unreachable|removed/,
    );
  });

  it('a global outage (exporters could not renew either) drops no endpoint after it lifts', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    const { cluster, tick, state } = await setup(cm);
    failEverything(cm);
    await tick(600_000); // no renewal gets through for 10 minutes
    cm.clearFaults();
    let fewest = Infinity;
    // The exporter renews again from 30 s after the lift (its period), every 10 s.
    for (let i = 0; i < 12; i++) {
      if (i >= 3) await heartbeat(cm, 'shop', 'c1', state.wall);
      await tick(10_000);
      fewest = Math.min(fewest, addresses(cluster).length);
    }
    expect(fewest).toBe(2);
  });

  it('an exporter that died during the importer outage goes stale one TTL after reads resume', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await publish(cm, exportOf('c2', 'shop', 'cart', endpoints(2, 2)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    await heartbeat(cm, 'shop', 'c2', 1_000_000);
    const { cluster, tick, state } = await setup(cm);
    failEverything(cm);
    for (let i = 0; i < 30; i++) {
      await heartbeat(cm, 'shop', 'c2', state.wall); // c1 is gone
      await tick(10_000);
    }
    expect(addresses(cluster)).toHaveLength(4); // nothing known yet: the last good state
    cm.clearFaults();
    const renewC2 = async (ms: number): Promise<void> => {
      for (let left = ms; left > 0; left -= 5_000) {
        await heartbeat(cm, 'shop', 'c2', state.wall);
        await tick(Math.min(left, 5_000));
      }
    };
    // A global outage also stops renewals: one TTL (60 s) of grace after reads resume…
    await renewC2(50_000);
    expect(addresses(cluster)).toHaveLength(4);
    // …then c1, which never renewed again, is stale.
    await renewC2(15_000);
    expect(addresses(cluster)).toEqual(['c2:10.2.0.1', 'c2:10.2.0.2']);
  });

  it('hostile records are refused one by one while the good ones import', async () => {
    const cm = createFakeCloudMap();
    const good = endpoints(2, 1);
    const bad = ['127.0.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.1'].map((address) => ({
      ...good[0]!,
      address,
    }));
    await publish(cm, exportOf('c1', 'shop', 'cart', [...good, ...bad]));
    // A record of another clusterset and a malformed one, written straight into Cloud Map.
    await publish(cm, exportOf('evil', 'shop', 'cart', endpoints(1, 66), {}, 'other-set'));
    const svc = cm.serviceByName('shop', 'cart')!;
    await cm.registerInstance(svc.id, 'junk-1', {
      CLUSTER_ID: 'c3',
      CLUSTERSET_ID: CLUSTERSET,
      AWS_INSTANCE_IPV4: '10.3.0.1',
      AWS_INSTANCE_PORT: '99999',
    });
    const { cluster } = await setup(cm);
    expect(addresses(cluster)).toEqual(['c1:10.1.0.1', 'c1:10.1.0.2']);
  });

  it('a refusal is counted on every reconcile but logged once per interval', async () => {
    const cm = createFakeCloudMap();
    const good = endpoints(2, 1);
    const bad = ['127.0.0.1', '169.254.169.254'].map((address) => ({ ...good[0]!, address }));
    await publish(cm, exportOf('c1', 'shop', 'cart', [...good, ...bad]));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    const logger = createMemoryLogger();
    const counted: string[] = [];
    const { tick, state } = await setup(cm, createFakeCluster(), 1_000_000, {
      logger,
      refused: (reason) => counted.push(reason),
    });
    // Each change of the service re-reconciles it (its bad addresses stay).
    for (let i = 0; i < 10; i++) {
      await publish(cm, exportOf('c1', 'shop', 'cart', [...endpoints(3 + i, 1), ...bad]));
      await heartbeat(cm, 'shop', 'c1', state.wall);
      await tick(3_000);
    }
    expect(counted.length).toBeGreaterThanOrEqual(2 * 10);
    const lines = logger.find('refused cloud map record');
    expect(lines.map((l) => l.fields['subject']).sort()).toEqual([
      'shop/cart c1 127.0.0.1',
      'shop/cart c1 169.254.169.254',
    ]);
  });

  it('Cloud Map services whose names cannot be Service names are counted refusals, not looping errors', async () => {
    const cm = createFakeCloudMap();
    for (const name of ['cart', 'Evil_Name', '_underscore'])
      await publish(cm, exportOf('c1', 'shop', name, endpoints(1, 1)));
    const counted: string[] = [];
    const outcomes: string[] = [];
    const { cluster, tick } = await setup(cm, createFakeCluster(), 1_000_000, {
      refused: (reason) => counted.push(reason),
      reconciled: (outcome) => outcomes.push(outcome),
    });
    await tick(30_000);
    expect([...cluster.imports.keys()]).toEqual(['shop/cart']);
    expect(outcomes.filter((o) => o === 'error' || o === 'terminal')).toEqual([]);
    expect(counted.filter((r) => r === 'invalid-service-name').length).toBeGreaterThanOrEqual(2);
  });

  it('records claiming this cluster import only while this cluster exports the service', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    await publish(cm, exportOf('me', 'shop', 'cart', endpoints(2, 9)));
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    await heartbeat(cm, 'shop', 'me', 1_000_000);
    const counted: string[] = [];
    const { cluster, ctl, tick, state } = await setup(cm, createFakeCluster(), 1_000_000, {
      localClusterId: 'me',
      refused: (reason) => counted.push(reason),
    });
    // No local ServiceExport of shop/cart: "me" records are someone else's.
    expect(addresses(cluster)).toEqual(['c1:10.1.0.1', 'c1:10.1.0.2']);
    expect(counted).toContain('own-cluster-id');
    expect(cluster.imports.get('shop/cart')?.status?.clusters).toEqual([{ cluster: 'c1' }]);
    // Exported here: our export agent wrote them, and our own endpoints belong in the import.
    cluster.exports.add('shop/cart');
    ctl.enqueue('shop/cart');
    await tick(1_000);
    expect(addresses(cluster)).toEqual([
      'c1:10.1.0.1',
      'c1:10.1.0.2',
      'me:10.9.0.1',
      'me:10.9.0.2',
    ]);
    // Unexported here: our export agent's records are still going for a moment. They leave
    // the import at once, and are not reported as someone else's.
    cluster.exports.delete('shop/cart');
    cluster.exportsDeletedAt.set('shop/cart', state.wall);
    counted.length = 0;
    ctl.enqueue('shop/cart');
    await tick(1_000);
    expect(addresses(cluster)).toEqual(['c1:10.1.0.1', 'c1:10.1.0.2']);
    expect(counted).not.toContain('own-cluster-id');
    // Still there a minute later: not ours any more, reported again.
    await tick(60_000);
    await heartbeat(cm, 'shop', 'c1', state.wall);
    ctl.enqueue('shop/cart');
    await tick(1_000);
    expect(addresses(cluster)).toEqual(['c1:10.1.0.1', 'c1:10.1.0.2']);
    expect(counted).toContain('own-cluster-id');
  });

  it('a restart with nothing changed writes nothing', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(230, 1)));
    await publish(
      cm,
      exportOf('c2', 'shop', 'cart', endpoints(3, 2), {
        type: 'ClusterSetIP',
        exportCreatedAtMs: 5,
      }),
    );
    await heartbeat(cm, 'shop', 'c1', 1_000_000);
    const first = await setup(cm);
    await first.tick(10_000);
    await first.ctl.stop();
    const cluster = first.cluster;
    const before = cluster.writes;
    expect(before).toBeGreaterThan(0);
    const second = await setup(cm, cluster, first.state.wall);
    await second.tick(30_000);
    expect(cluster.writeLog.slice(before)).toEqual([]);
  });

  it('a failed write is retried until it converges', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    const cluster = createFakeCluster();
    cluster.failNextWrites(3);
    const { tick } = await setup(cm, cluster);
    await tick(5_000);
    expect(cluster.imports.get('shop/cart')?.spec.ips).toEqual(['10.96.0.1']);
    expect(cluster.slices.size).toBe(1);
  });

  it('imports only into namespaces that exist here', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'elsewhere', 'cart', endpoints(2, 1)));
    const { cluster, ctl, tick } = await setup(cm);
    expect(cluster.imports.size).toBe(0);
    // The agent's Namespace watch (watches.ts) on the controller.
    const namespaces = createEventHub<{ metadata: { name: string } }>();
    const hub = createEventHub<never>();
    const w = { ...{ serviceImports: hub, serviceExports: hub, services: hub }, namespaces };
    const all = { ...w, endpointSlices: hub, localAddresses: hub, external: hub };
    bindWatches(importWatches(all, ctl), ctl.enqueue, noopLogger);
    cluster.namespaces.add('elsewhere');
    namespaces.emit('add', { metadata: { name: 'elsewhere' } });
    await tick(2_000);
    expect(cluster.imports.has('elsewhere/cart')).toBe(true);
  });
});

describe('import scope over the fake Cloud Map', () => {
  it('does not poll, nor import, services of a denied namespace; counts the refusal per round, logs it once', async () => {
    const cm = createFakeCloudMap();
    await publish(cm, exportOf('c1', 'kube-system', 'kubernetes', endpoints(1, 1)));
    await publish(cm, exportOf('c1', 'default', 'kubernetes', endpoints(1, 1)));
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(1, 1)));
    const cluster = createFakeCluster(['kube-system', 'default', 'shop']);
    const logger = createMemoryLogger();
    const counted: string[] = [];
    const { tick } = await setup(cm, cluster, 1_000_000, {
      logger,
      refused: (r) => counted.push(r),
    });
    await tick(70_000); // a second slow round
    expect([...cluster.imports.keys()]).toEqual(['shop/cart']);
    // Only shop's service is read: one DiscoverInstances for it at the start and the
    // backstop's first read (at 60 s, it is the only service), none for the denied two.
    expect(cm.calls('discoverInstances')).toBe(2);
    expect(counted.filter((r) => r === 'namespace-denied').length).toBeGreaterThanOrEqual(4);
    expect(
      logger
        .find('refused cloud map record')
        .filter((e) => e.fields['reason'] === 'namespace-denied')
        .map((e) => e.fields['subject'])
        .sort(),
    ).toEqual(['default', 'kube-system']);
  });
});
