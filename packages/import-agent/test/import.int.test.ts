// Issue 6 "Done when": import agents as real processes on harness clusters (or any clusters
// from MCS_E2E_KUBECONFIGS) against the Cloud Map emulator. The export side is played by the
// test, writing records with the codec straight into the emulator, as an export agent does,
// for clusters r1 and r2 (not the harness clusters c1 and c2: records claiming the importing
// cluster's own id are refused unless it exports the service).
import { readFileSync } from 'node:fs';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import {
  derivedServiceName,
  type ClusterExport,
  type Endpoint,
  type ServiceProperties,
} from '@cloudmap-mcs/core';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { props } from './cloudmap-fixtures.js';
import { AgentProcess, Publisher, testCloudMap } from './int-helpers.js';

const CLUSTERSET = 'e2e-clusterset';
const TTL_SECONDS = 12;
let clusters: E2eCluster[];
let ns: TestNamespace;
let ttlNs: TestNamespace;
let publisher: Publisher;
let admin: EmulatorAdminClient;
const agents: AgentProcess[] = [];
let renewing: NodeJS.Timeout | undefined;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const eps = (n: number, octet = 1, port = 8080): Endpoint[] =>
  Array.from({ length: n }, (_, i) => ({
    address: `10.${String(octet)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`,
    addressType: 'IPv4' as const,
    ports: [{ name: 'http', protocol: 'TCP' as const, port }],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: `node-${String(i % 3)}`,
    zone: 'us-east-1a',
  }));
const exp = (
  cluster: string,
  namespace: string,
  name: string,
  endpoints: Endpoint[],
  over: Partial<ServiceProperties> = {},
): ClusterExport => ({
  namespace,
  name,
  cluster: { clusterId: cluster, clustersetId: CLUSTERSET },
  properties: props(over),
  endpoints,
  hasExportRecord: true,
});

interface SI {
  metadata: { resourceVersion: string };
  spec: { type: string; ips?: string[]; ports: { name?: string; port: number }[] };
  status?: {
    clusters?: { cluster: string }[];
    conditions?: { type: string; status: string; message: string }[];
  };
}
async function serviceImport(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<SI | undefined> {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace,
      plural: 'serviceimports',
      name,
    })) as SI;
  } catch {
    return undefined;
  }
}
async function slices(kc: KubeConfig, namespace: string, name: string): Promise<V1EndpointSlice[]> {
  const list = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace,
    labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
  });
  return list.items;
}
const addresses = (items: V1EndpointSlice[]): string[] =>
  items
    .flatMap((s) =>
      (s.endpoints ?? []).map(
        (e) =>
          `${s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] ?? ''}:${e.addresses[0] ?? ''}`,
      ),
    )
    .sort();

beforeAll(async () => {
  const ctx = e2eContext();
  clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  const env = ctx.cloudMapEnv;
  if (env === null) throw new Error('these suites need the Cloud Map emulator (MCS_E2E_EMULATOR)');
  publisher = new Publisher(testCloudMap(env));
  admin = new EmulatorAdminClient(env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '');
  ns = await e2eNamespace('imp');
  ttlNs = await e2eNamespace('impttl');
  // The clusters the test plays export in `ns` and renew their heartbeats as an export agent
  // does (records of our schema without a heartbeat go stale one TTL after first seen).
  const renew = (): Promise<void> =>
    Promise.all(
      ['r1', 'r2'].map((c) => publisher.heartbeat(ns.name, c, CLUSTERSET).catch(() => undefined)),
    ).then(() => undefined);
  await renew();
  renewing = setInterval(() => void renew(), 2_000);
  for (const c of clusters.slice(0, 2)) {
    const agent = new AgentProcess(
      `import-${c.name}`,
      ['--poll-fast-seconds', '1', '--heartbeat-ttl-seconds', String(TTL_SECONDS)],
      {
        ...env,
        KUBECONFIG: c.kubeconfigPath,
        POD_NAMESPACE: ns.name,
        // Liveness counts from the read that saw a renewal change, so the heartbeats must be
        // read well within the TTL (the default read period, 30 s, is for the default 120 s).
        MCS_TEST_TIMINGS: JSON.stringify({
          pollSlowSeconds: 2,
          pollMaxBackoffSeconds: 4,
          pollHeartbeatSeconds: 1,
        }),
      },
    );
    await agent.start();
    agents.push(agent);
  }
}, 180_000);

afterAll(async () => {
  clearInterval(renewing);
  await admin?.outage(false).catch(() => undefined);
  for (const a of agents) await a.stop();
  await ns?.delete({ wait: false });
  await ttlNs?.delete({ wait: false });
});

describe('import agent, two clusters', () => {
  it('an export from r1 appears in c1 and in c2: clusterset IP = derived Service ClusterIP, slices with the spec labels', async () => {
    await publisher.publish(exp('r1', ns.name, 'web', eps(3)));
    for (const c of clusters.slice(0, 2)) {
      const si = await waitFor(`ServiceImport web in ${c.name}`, async () => {
        const got = await serviceImport(c.kc, ns.name, 'web');
        return got?.spec.ips?.length === 1 && got.status?.conditions?.[0]?.status === 'True'
          ? got
          : undefined;
      });
      const derived = await c.kc
        .makeApiClient(CoreV1Api)
        .readNamespacedService({ namespace: ns.name, name: derivedServiceName(ns.name, 'web') });
      expect(si.spec.ips).toEqual(derived.spec?.clusterIPs);
      expect(derived.spec?.selector).toBeUndefined();
      expect(si.status?.clusters).toEqual([{ cluster: 'r1' }]);
      const items = await waitFor('slices', async () => {
        const s = await slices(c.kc, ns.name, 'web');
        return s.length === 1 ? s : undefined;
      });
      expect(items[0]?.metadata?.labels).toMatchObject({
        'kubernetes.io/service-name': derivedServiceName(ns.name, 'web'),
        'multicluster.kubernetes.io/service-name': 'web',
        'multicluster.kubernetes.io/source-cluster': 'r1',
        'endpointslice.kubernetes.io/managed-by': 'cloudmap-mcs-import-agent',
      });
      expect(
        (items[0]?.endpoints ?? []).map((e) => [
          e.addresses[0],
          e.conditions?.ready,
          e.nodeName,
          e.zone,
        ]),
      ).toEqual([
        ['10.1.0.1', true, 'node-0', 'us-east-1a'],
        ['10.1.0.2', true, 'node-1', 'us-east-1a'],
        ['10.1.0.3', true, 'node-2', 'us-east-1a'],
      ]);
    }
  });

  it('r1 and r2 with overlapping pod IPs merge; port and type conflicts give the union and the oldest type', async () => {
    await publisher.publish(exp('r1', ns.name, 'api', eps(2), { exportCreatedAtMs: 1_000 }));
    await publisher.publish(
      exp('r2', ns.name, 'api', eps(2), {
        exportCreatedAtMs: 2_000,
        type: 'Headless',
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'grpc', protocol: 'TCP', port: 9090 },
        ],
      }),
    );
    const c2 = clusters[1]!;
    await waitFor(
      'both clusters in api',
      async () => addresses(await slices(c2.kc, ns.name, 'api')).length === 4,
    );
    expect(addresses(await slices(c2.kc, ns.name, 'api'))).toEqual([
      'r1:10.1.0.1',
      'r1:10.1.0.2',
      'r2:10.1.0.1',
      'r2:10.1.0.2',
    ]);
    const si = await waitFor('merged api', async () => {
      const got = await serviceImport(c2.kc, ns.name, 'api');
      return got?.status?.clusters?.length === 2 ? got : undefined;
    });
    expect(si.spec.type).toBe('ClusterSetIP');
    expect(si.spec.ports.map((p) => [p.name, p.port])).toEqual([
      ['http', 80],
      ['grpc', 9090],
    ]);
    expect(si.status?.conditions?.[0]?.message).toMatch(/PortConflict, TypeConflict/);
  });

  it('250 endpoints give 3 slices; scaling back removes them; headless has no IPs', async () => {
    const c2 = clusters[1]!;
    await publisher.publish(exp('r1', ns.name, 'big', eps(250)));
    const sizes = async (): Promise<number[]> =>
      (await slices(c2.kc, ns.name, 'big'))
        .map((s) => (s.endpoints ?? []).length)
        .sort((a, b) => a - b);
    await waitFor('3 slices', async () => (await sizes()).join() === '50,100,100', {
      timeoutMs: 90_000,
    });
    await publisher.publish(exp('r1', ns.name, 'big', eps(5)));
    await waitFor('1 slice', async () => (await sizes()).join() === '5', { timeoutMs: 90_000 });

    await publisher.publish(exp('r1', ns.name, 'hl', eps(2), { type: 'Headless' }));
    const si = await waitFor('headless import', async () => {
      const got = await serviceImport(c2.kc, ns.name, 'hl');
      return got?.status?.conditions?.[0]?.status === 'True' ? got : undefined;
    });
    expect(si.spec.type).toBe('Headless');
    expect(si.spec.ips ?? []).toEqual([]);
    const derived = await c2.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ namespace: ns.name, name: derivedServiceName(ns.name, 'hl') });
    expect(derived.spec?.clusterIP).toBe('None');
    expect(addresses(await slices(c2.kc, ns.name, 'hl'))).toEqual(['r1:10.1.0.1', 'r1:10.1.0.2']);
  });

  it('hostile records injected into the emulator are refused while the good ones import', async () => {
    await publisher.publish(exp('r1', ns.name, 'guarded', eps(3)));
    const good = (
      await testCloudMap(e2eContext().cloudMapEnv ?? {}).discoverInstances(ns.name, 'guarded')
    ).instances.find((i) => i.attributes['MCS_RECORD'] === 'endpoint');
    const base = { ...good!.attributes };
    const hostile: [string, Record<string, string>][] = [
      ['evil-loopback', { ...base, AWS_INSTANCE_IPV4: '127.0.0.1' }],
      ['evil-imds', { ...base, AWS_INSTANCE_IPV4: '169.254.169.254' }],
      ['evil-any', { ...base, AWS_INSTANCE_IPV4: '0.0.0.0' }],
      ['evil-mcast', { ...base, AWS_INSTANCE_IPV4: '224.0.0.251' }],
      ['evil-port', { ...base, AWS_INSTANCE_IPV4: '10.1.9.9', AWS_INSTANCE_PORT: '70000' }],
      ['evil-proto', { ...base, AWS_INSTANCE_IPV4: '10.1.9.10', ENDPOINT_PROTOCOL: 'ICMP' }],
      ['evil-set', { ...base, AWS_INSTANCE_IPV4: '10.1.9.11', CLUSTERSET_ID: 'another-set' }],
      ['evil-cluster', { ...base, AWS_INSTANCE_IPV4: '10.1.9.12', CLUSTER_ID: 'Not A Label!' }],
    ];
    let accepted = 0;
    for (const [id, attributes] of hostile) {
      // The emulator, like Cloud Map, refuses some of these itself (AWS_INSTANCE_PORT 70000).
      const ok = await publisher.register(ns.name, 'guarded', id, attributes).then(
        () => true,
        (error: unknown) =>
          error instanceof Error && /InvalidInput/.test(error.message)
            ? false
            : Promise.reject(error),
      );
      if (ok) accepted++;
    }
    expect(accepted).toBeGreaterThanOrEqual(6);
    // The hostile records stay in Cloud Map next to the good ones…
    const stored = await testCloudMap(e2eContext().cloudMapEnv ?? {}).discoverInstances(
      ns.name,
      'guarded',
    );
    expect(stored.instances.filter((i) => i.id.startsWith('evil-')).length).toBe(accepted);
    // …and every one the agent can see (evil-set is filtered out by CLUSTERSET_ID) is refused.
    const agent = agents[1]!;
    await waitFor(
      'refusals counted',
      async () => (await agent.metric('mcs_import_refused_records_total')) >= accepted - 1,
      {
        timeoutMs: 30_000,
      },
    );
    const c2 = clusters[1]!;
    await waitFor(
      'guarded imports the good ones',
      async () => addresses(await slices(c2.kc, ns.name, 'guarded')).length === 3,
    );
    expect(addresses(await slices(c2.kc, ns.name, 'guarded'))).toEqual([
      'r1:10.1.0.1',
      'r1:10.1.0.2',
      'r1:10.1.0.3',
    ]);
    const si = await serviceImport(c2.kc, ns.name, 'guarded');
    expect(si?.status?.clusters).toEqual([{ cluster: 'r1' }]);
    expect(si?.status?.conditions?.[0]?.status).toBe('True');
  });

  it('records claiming the importing cluster are refused there unless it exports the service', async () => {
    // Harness cluster c2 has cluster id "c2". Someone writes records in its name.
    const [c1, c2] = [clusters[0]!, clusters[1]!];
    const beat = (): Promise<void> =>
      publisher.heartbeat(ns.name, c2.name, CLUSTERSET).catch(() => undefined);
    await beat();
    const beating = setInterval(() => void beat(), 2_000);
    try {
      await impostor(c1, c2);
    } finally {
      clearInterval(beating);
      await publisher.unpublish(ns.name, 'impostor', c2.name);
    }
  });

  async function impostor(c1: E2eCluster, c2: E2eCluster): Promise<void> {
    await publisher.publish(exp(c2.name, ns.name, 'impostor', eps(2, 7)));
    // c1 imports them as c2's; c2 does not: it never exported impostor.
    await waitFor(
      'impostor in c1',
      async () => addresses(await slices(c1.kc, ns.name, 'impostor')).length === 2,
    );
    await waitFor(
      'own-cluster-id refusal counted in c2',
      async () =>
        (await agents[1]!.metric('mcs_import_refused_records_total', 'reason="own-cluster-id"')) >
        0,
      { timeoutMs: 30_000 },
    );
    expect(await serviceImport(c2.kc, ns.name, 'impostor')).toBeUndefined();
    // Once c2 exports the service, its own records are its export agent's and import there.
    await c2.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: ns.name,
      plural: 'serviceexports',
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'impostor' },
      },
    });
    await waitFor(
      'own records imported in c2 once exported there',
      async () => addresses(await slices(c2.kc, ns.name, 'impostor')).length === 2,
    );
    // Unexported in c2: for a minute its records are taken for its export agent's, still
    // being removed (here nobody removes them). They leave c2's import, and are not reported
    // as someone else's.
    const refused = () =>
      agents[1]!.metric('mcs_import_refused_records_total', 'reason="own-cluster-id"');
    const before = await refused();
    await c2.kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: ns.name,
      plural: 'serviceexports',
      name: 'impostor',
    });
    await waitFor(
      'c2 drops its own records once unexported',
      async () => (await serviceImport(c2.kc, ns.name, 'impostor')) === undefined,
    );
    expect(await refused()).toBe(before);
  }

  it("the importing cluster's own Service IPs and node addresses are never imported there", async () => {
    // Issue 11 item 4: c2's API server IP (its Service CIDR) and a node address of c2, written
    // as r1's endpoints, are imported by c1 (they are not c1's) but refused by c2.
    const [c1, c2] = [clusters[0]!, clusters[1]!];
    const core = c2.kc.makeApiClient(CoreV1Api);
    const apiIp =
      (await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' })).spec
        ?.clusterIP ?? '';
    const nodeIp =
      (await core.listNode()).items
        .flatMap((n) => n.status?.addresses ?? [])
        .find((a) => a.type === 'InternalIP')?.address ?? '';
    expect(apiIp).not.toBe('');
    expect(nodeIp).not.toBe('');
    const good = eps(1, 1)[0]!;
    const list: Endpoint[] = [apiIp, nodeIp, '10.1.0.1'].map((address) => ({ ...good, address }));
    await publisher.publish(exp('r1', ns.name, 'local', list));
    await waitFor(
      'c1 imports all three',
      async () => addresses(await slices(c1.kc, ns.name, 'local')).length === 3,
    );
    await waitFor(
      'c2 imports only the pod address',
      async () => addresses(await slices(c2.kc, ns.name, 'local')).join() === 'r1:10.1.0.1',
    );
    expect(
      await agents[1]!.metric('mcs_import_refused_records_total', 'reason="refused-address"'),
    ).toBeGreaterThan(0);
    const log = readFileSync(agents[1]!.logFile, 'utf8');
    for (const detail of ['local-service-cidr', 'local-node'])
      expect(log).toContain(`"detail":"${detail}"`);
    await publisher.unpublish(ns.name, 'local', 'r1');
  });

  it('an emulator outage longer than the TTL loses no endpoint, is reported, and converges after it lifts', async () => {
    // Issue 11 item 1: heartbeats frozen by the importer's own outage used to be compared with
    // the wall clock, so every import emptied one TTL into the outage.
    const c2 = clusters[1]!;
    const before = addresses(await slices(c2.kc, ns.name, 'api'));
    expect(before).toHaveLength(4);
    const lost = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const seen = addresses(await slices(c2.kc, ns.name, 'api').catch(() => []));
        for (const a of before) if (!seen.includes(a)) lost.add(a);
        await sleep(500);
      }
    })();
    const outageMs = 30_000; // TTL 12 s
    const startedAt = Date.now();
    await admin.outage('unavailable');
    try {
      await waitFor(
        'unreachable reported',
        async () =>
          (await agents[1]!.metric('mcs_import_cloudmap_reachable')) === 0 ? true : undefined,
        { timeoutMs: 30_000 },
      );
      const ready = await agents[1]!.get('/readyz?verbose');
      expect(ready.status).toBe(503);
      expect(ready.text).toMatch(
        /cloud-map failed: Cloud Map unreachable; serving the last good state/,
      );
      expect((await agents[1]!.get('/healthz')).status).toBe(200);
      await sleep(Math.max(0, outageMs - (Date.now() - startedAt)));
      expect(await serviceImport(c2.kc, ns.name, 'web')).toBeDefined();
    } finally {
      await admin.outage(false);
    }
    const liftedAt = Date.now();
    // A change made as the outage lifted arrives within about one fast period (1 s here).
    await publisher.publish(exp('r1', ns.name, 'api', eps(3), { exportCreatedAtMs: 1_000 }));
    await waitFor(
      'the change made as it lifted',
      async () => addresses(await slices(c2.kc, ns.name, 'api')).includes('r1:10.1.0.3'),
      { timeoutMs: 20_000 },
    );
    const convergedMs = Date.now() - liftedAt;
    await waitFor(
      'reachable again',
      async () =>
        (await agents[1]!.metric('mcs_import_cloudmap_reachable')) === 1 ? true : undefined,
      { timeoutMs: 30_000 },
    );
    // Keep watching one TTL past the lift, while the renewals catch up.
    await sleep((TTL_SECONDS + 3) * 1000);
    sampling = false;
    await sampler;
    console.log(
      `importer outage ${String(outageMs / 1000)} s with TTL ${String(TTL_SECONDS)} s: ` +
        `endpoints lost ${String(lost.size)}, change made at the lift imported after ${String(convergedMs)} ms`,
    );
    expect([...lost]).toEqual([]);
    expect(addresses(await slices(c2.kc, ns.name, 'api'))).toEqual(
      [...before, 'r1:10.1.0.3'].sort(),
    );
  });

  it('a restart with nothing changed writes nothing', async () => {
    const c2 = clusters[1]!;
    const versions = async (): Promise<string[]> => {
      const sis = (await c2.kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: 'multicluster.x-k8s.io',
        version: 'v1beta1',
        namespace: ns.name,
        plural: 'serviceimports',
      })) as { items: SI[] & { metadata: { name: string } }[] };
      const svcs = await c2.kc
        .makeApiClient(CoreV1Api)
        .listNamespacedService({ namespace: ns.name });
      const sl = await c2.kc
        .makeApiClient(DiscoveryV1Api)
        .listNamespacedEndpointSlice({ namespace: ns.name });
      return [
        ...sis.items.map(
          (i) =>
            `si/${String((i.metadata as { name?: string }).name)}@${i.metadata.resourceVersion}`,
        ),
        ...svcs.items.map(
          (s) => `svc/${s.metadata?.name ?? ''}@${s.metadata?.resourceVersion ?? ''}`,
        ),
        ...sl.items.map(
          (s) => `slice/${s.metadata?.name ?? ''}@${s.metadata?.resourceVersion ?? ''}`,
        ),
      ].sort();
    };
    // Let anything in flight settle first.
    await new Promise((r) => setTimeout(r, 4_000));
    const before = await versions();
    expect(before.length).toBeGreaterThan(5);
    await agents[1]!.stop();
    await agents[1]!.start();
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await versions()).toEqual(before);
    expect(await agents[1]!.metric('mcs_import_k8s_writes_total')).toBe(0);
  });

  it('unexporting everywhere deletes the import everywhere', async () => {
    await publisher.unpublish(ns.name, 'api', 'r1');
    await publisher.unpublish(ns.name, 'api', 'r2');
    for (const c of clusters.slice(0, 2)) {
      await waitFor(
        `api gone in ${c.name}`,
        async () =>
          (await serviceImport(c.kc, ns.name, 'api')) === undefined &&
          (await slices(c.kc, ns.name, 'api')).length === 0,
      );
      await waitFor('derived Service gone', async () => {
        try {
          await c.kc.makeApiClient(CoreV1Api).readNamespacedService({
            namespace: ns.name,
            name: derivedServiceName(ns.name, 'api'),
          });
          return false;
        } catch {
          return true;
        }
      });
    }
  });

  it('a cluster whose export agent stops past the TTL loses its endpoints in c2', async () => {
    const c2 = clusters[1]!;
    let r1Alive = true;
    const renew = setInterval(() => {
      void publisher.heartbeat(ttlNs.name, 'r2', CLUSTERSET).catch(() => undefined);
      if (r1Alive) void publisher.heartbeat(ttlNs.name, 'r1', CLUSTERSET).catch(() => undefined);
    }, 2_000);
    try {
      await publisher.heartbeat(ttlNs.name, 'r1', CLUSTERSET);
      await publisher.heartbeat(ttlNs.name, 'r2', CLUSTERSET);
      await publisher.publish(exp('r1', ttlNs.name, 'ttl', eps(2, 1)));
      await publisher.publish(exp('r2', ttlNs.name, 'ttl', eps(2, 2)));
      await waitFor(
        'both clusters imported',
        async () => addresses(await slices(c2.kc, ttlNs.name, 'ttl')).length === 4,
      );
      r1Alive = false;
      const stoppedAt = Date.now();
      await waitFor(
        'r1 endpoints removed',
        async () =>
          addresses(await slices(c2.kc, ttlNs.name, 'ttl')).join() === 'r2:10.2.0.1,r2:10.2.0.2',
        {
          timeoutMs: (TTL_SECONDS + 30) * 1000,
        },
      );
      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual((TTL_SECONDS - 3) * 1000);
      // The status is written after the slices in the same reconcile: wait for it to say so.
      const message = await waitFor('Ready names the removed cluster', async () => {
        const m = (await serviceImport(c2.kc, ttlNs.name, 'ttl'))?.status?.conditions?.[0]?.message;
        return m?.includes('endpoints of r1 removed') === true ? m : undefined;
      });
      expect(message).toMatch(/endpoints of r1 removed/);
    } finally {
      clearInterval(renew);
    }
  });
});
