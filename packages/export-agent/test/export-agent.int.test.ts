import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1EndpointSlice,
  type V1ServiceSpec,
} from '@kubernetes/client-node';
import { EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import { waitFor } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import {
  Attr,
  decodeFeed,
  encodeClusterExport,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  type CloudMapPort,
  type ClusterExport,
  type ClusterIdentity,
} from '@cloudmap-mcs/core';
import { startAgentProcess, type AgentProcess } from './int/agent-process.js';
import { cloudMapReader, instancesOf } from './int/cloudmap-reader.js';

// Done-when of issue 5, against real kube-apiservers and the Cloud Map emulator, with the
// agent as a real process. Each test uses its own Service name in one shared namespace.
const clusters = e2eClusters();
const ctx = e2eContext();
// The emulator's SDK environment, or (external clusters, real AWS) the AWS_* of this process.
const env: Record<string, string> =
  ctx.cloudMapEnv === null
    ? Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => e[0].startsWith('AWS_') && e[1] !== undefined,
        ),
      )
    : { ...ctx.cloudMapEnv };
const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const FINALIZER = 'cloudmap-mcs.io/export-records';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let ns: string;
let deleteNs: () => Promise<void>;
let reader: CloudMapPort;
let admin: EmulatorAdminClient | undefined;
const agents: AgentProcess[] = [];

const api = (c: E2eCluster) => ({
  core: c.kc.makeApiClient(CoreV1Api),
  discovery: c.kc.makeApiClient(DiscoveryV1Api),
  custom: c.kc.makeApiClient(CustomObjectsApi),
});

async function identityOf(kc: KubeConfig): Promise<ClusterIdentity> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const value = async (name: string) =>
    (
      (await custom.getClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1beta1',
        plural: 'clusterproperties',
        name,
      })) as {
        spec: { value: string };
      }
    ).spec.value;
  return {
    clusterId: await value('cluster.clusterset.k8s.io'),
    clustersetId: await value('clusterset.k8s.io'),
  };
}

function startAgent(c: E2eCluster): AgentProcess {
  const agent = startAgentProcess(c.kubeconfigPath, env);
  agents.push(agent);
  return agent;
}
async function stopAgent(agent: AgentProcess) {
  expect(await agent.stop()).toBe(0);
  // Issue 35: the first exports into a new namespace (this file's, at its first test) logged
  // "heartbeat failed: DuplicateRequest"; nothing the agent writes may be refused that way.
  expect(
    agent.logs.filter((l) => /"level":"(warn|error)"/.test(l) && l.includes('Duplicate')),
  ).toEqual([]);
  agents.splice(agents.indexOf(agent), 1);
}

interface Addr {
  ip: string;
  ready?: boolean;
  terminating?: boolean;
}
const sliceBody = (name: string, addrs: Addr[], port = 8080): V1EndpointSlice => ({
  metadata: {
    name: `${name}-manual`,
    namespace: ns,
    labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'e2e' },
  },
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port }],
  endpoints: addrs.map((a) => ({
    addresses: [a.ip],
    conditions: {
      ready: a.ready ?? true,
      serving: a.ready ?? true,
      terminating: a.terminating ?? false,
    },
    nodeName: 'node-x',
    zone: 'us-east-1a',
  })),
});

async function exportService(
  c: E2eCluster,
  name: string,
  addrs: Addr[],
  servicePort = 80,
  spec: V1ServiceSpec = {},
) {
  const { core, discovery, custom } = api(c);
  await core.createNamespacedService({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns },
      spec: {
        ports: [{ name: 'http', protocol: 'TCP', port: servicePort, targetPort: 'web' }],
        ...spec,
      },
    },
  });
  await discovery.createNamespacedEndpointSlice({ namespace: ns, body: sliceBody(name, addrs) });
  await custom.createNamespacedCustomObject({
    ...SE,
    namespace: ns,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name, namespace: ns },
    },
  });
}

async function setEndpoints(c: E2eCluster, name: string, addrs: Addr[]) {
  await api(c).discovery.replaceNamespacedEndpointSlice({
    namespace: ns,
    name: `${name}-manual`,
    body: sliceBody(name, addrs),
  });
}

interface SeObject {
  metadata: { creationTimestamp: string; finalizers?: string[] };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}
const readExport = async (c: E2eCluster, name: string): Promise<SeObject | undefined> => {
  try {
    return (await api(c).custom.getNamespacedCustomObject({
      ...SE,
      namespace: ns,
      name,
    })) as SeObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
};
const condition = async (c: E2eCluster, name: string, type: string) =>
  (await readExport(c, name))?.status?.conditions?.find((x) => x.type === type);

const own = (id: ClusterIdentity, name: string) =>
  instancesOf(reader, ns, name, {
    [Attr.ClustersetId]: id.clustersetId,
    [Attr.ClusterId]: id.clusterId,
  });
const readyIps = async (id: ClusterIdentity, name: string) =>
  (await own(id, name))
    .filter((i) => i.attributes[Attr.Record] === 'endpoint')
    .map((i) => `${i.attributes[Attr.Ipv4]}:${i.attributes[Attr.Ready]}`)
    .sort();
const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
  waitFor(what, probe, { timeoutMs: 60_000, intervalMs: 250 });

/** The agent's Cloud Map calls so far, by operation (its `mcs_cloudmap_calls_total`). */
async function callsByOperation(agent: AgentProcess): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const re = /^mcs_cloudmap_calls_total\{[^}]*operation="([^"]+)"[^}]*\} (\d+)/gm;
  for (const m of (await agent.metrics()).matchAll(re))
    out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  return out;
}
const metricValue = async (agent: AgentProcess, name: string) =>
  Number((await agent.metrics()).match(new RegExp(`^${name} (\\S+)`, 'm'))?.[1] ?? NaN);

/** Polls (100 ms) until `probe` holds; returns the seconds it took, within a generous 60 s. */
async function secondsUntil(what: string, probe: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  await waitFor(what, async () => (await probe()) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return (performance.now() - started) / 1000;
}

describe('export agent as a process (harness + emulator)', () => {
  const c1 = clusters[0]!;
  const c2 = clusters[1]!;
  let id1: ClusterIdentity;
  let id2: ClusterIdentity;

  beforeAll(async () => {
    const created = await e2eNamespace('export');
    ns = created.name;
    deleteNs = () => created.delete();
    reader = cloudMapReader(env);
    const endpoint = env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
    admin = endpoint === undefined ? undefined : new EmulatorAdminClient(endpoint);
    id1 = await identityOf(c1.kc);
    id2 = await identityOf(c2.kc);
  });

  afterAll(async () => {
    for (const a of agents.splice(0)) await a.stop();
    // Finalizers would keep the namespace while no agent runs: drop them first.
    for (const c of clusters) {
      const list = (await api(c).custom.listNamespacedCustomObject({ ...SE, namespace: ns })) as {
        items: { metadata: { name: string } }[];
      };
      for (const se of list.items) {
        await api(c).custom.patchNamespacedCustomObject(
          {
            ...SE,
            namespace: ns,
            name: se.metadata.name,
            body: { metadata: { finalizers: null } },
          },
          merge,
        );
      }
    }
    await deleteNs?.();
  });

  it('exports the exact records of docs/cloudmap-schema.md, then reflects scaling and readiness flips', async () => {
    const agent = startAgent(c1);
    await exportService(c1, 'cart', [{ ip: '10.1.0.10' }, { ip: '10.1.0.11' }]);
    await until(
      'Ready=True',
      async () => (await condition(c1, 'cart', 'Ready'))?.reason === 'Exported',
    );
    const se = (await readExport(c1, 'cart'))!;
    expect(se.metadata.finalizers).toEqual([FINALIZER]);
    expect(se.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Valid', 'True', 'Valid'],
      ['Ready', 'True', 'Exported'],
      ['Conflict', 'False', 'NoConflicts'],
    ]);
    const expected: ClusterExport = {
      namespace: ns,
      name: 'cart',
      cluster: id1,
      hasExportRecord: true,
      properties: {
        type: 'ClusterSetIP',
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'web' }],
        sessionAffinity: 'None',
        internalTrafficPolicy: 'Cluster',
        ipFamilies: ['IPv4'],
        exportedLabels: {},
        exportedAnnotations: {},
        exportCreatedAtMs: Date.parse(se.metadata.creationTimestamp),
      },
      endpoints: ['10.1.0.10', '10.1.0.11'].map((address) => ({
        address,
        addressType: 'IPv4' as const,
        ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: 'node-x',
        zone: 'us-east-1a',
      })),
    };
    const want = encodeClusterExport(expected).instances.sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(await own(id1, 'cart')).toEqual(want);

    await setEndpoints(c1, 'cart', [
      { ip: '10.1.0.10' },
      { ip: '10.1.0.11', ready: false, terminating: true },
      { ip: '10.1.0.12' },
    ]);
    await until(
      'scaled up, one not ready',
      async () =>
        JSON.stringify(await readyIps(id1, 'cart')) ===
        JSON.stringify(['10.1.0.10:true', '10.1.0.11:false', '10.1.0.12:true']),
    );
    await setEndpoints(c1, 'cart', [{ ip: '10.1.0.12' }]);
    await until(
      'scaled down',
      async () =>
        JSON.stringify(await readyIps(id1, 'cart')) === JSON.stringify(['10.1.0.12:true']),
    );
    await stopAgent(agent);
  });

  it('a Service exported after the agent started keeps its records through its first change', async () => {
    // Its Service and slice were cached as stubs when the export appeared (read aside, then
    // replaced by the watch); the Service's first change once dropped the copies aside while
    // the slice was still a stub: Valid=False "Service not found", records deregistered.
    const agent = startAgent(c1);
    // Created once the Service and slice caches have listed, so they hold them as stubs.
    await until('the Service and EndpointSlice caches synced', async () =>
      ['services', 'endpointslices'].every((name) =>
        agent.logs.some((l) => l.includes('informer synced') && l.includes(`"${name}"`)),
      ),
    );
    await exportService(c1, 'late', [{ ip: '10.1.0.40' }, { ip: '10.1.0.41' }]);
    await until(
      'late exported',
      async () => (await condition(c1, 'late', 'Ready'))?.reason === 'Exported',
    );
    const { core } = api(c1);
    const svc = await core.readNamespacedService({ name: 'late', namespace: ns });
    svc.spec!.ports = [{ name: 'http', protocol: 'TCP', port: 81, targetPort: 'web' }];
    await core.replaceNamespacedService({ name: 'late', namespace: ns, body: svc });
    await until('the new port in the endpoint records', async () =>
      (await own(id1, 'late')).some(
        (i) => i.attributes[Attr.Record] === 'endpoint' && i.attributes[Attr.ServicePort] === '81',
      ),
    );
    expect(await readyIps(id1, 'late')).toEqual(['10.1.0.40:true', '10.1.0.41:true']);
    expect((await condition(c1, 'late', 'Valid'))?.status).toBe('True');
    expect(agent.logs.filter((l) => l.includes('not found'))).toEqual([]);
    await stopAgent(agent);
  });

  it('follows a Deployment scaled by the real EndpointSlice controller (ServiceExport created as v1alpha1)', async () => {
    const agent = startAgent(c1);
    const apps = c1.kc.makeApiClient(AppsV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web', namespace: ns },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                { name: 'web', image: 'nginx', ports: [{ name: 'web', containerPort: 8080 }] },
              ],
            },
          },
        },
      },
    });
    await api(c1).core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'web', namespace: ns },
        spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'web' }] },
      },
    });
    await api(c1).custom.createNamespacedCustomObject({
      ...SE,
      version: 'v1alpha1',
      namespace: ns,
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceExport',
        metadata: { name: 'web', namespace: ns },
      },
    });
    const endpointsOf = async () =>
      (await own(id1, 'web')).filter(
        (i) => i.attributes[Attr.Record] === 'endpoint' && i.attributes[Attr.Ready] === 'true',
      );
    await until('2 ready endpoints', async () => (await endpointsOf()).length === 2);
    // The named target port resolved by the EndpointSlice controller.
    expect(
      (await endpointsOf()).map((i) => [
        i.attributes[Attr.Port],
        i.attributes[Attr.ServiceTargetPort],
      ]),
    ).toEqual([
      ['8080', 'web'],
      ['8080', 'web'],
    ]);
    await apps.patchNamespacedDeploymentScale(
      { namespace: ns, name: 'web', body: { spec: { replicas: 4 } } },
      merge,
    );
    await until('4 ready endpoints', async () => (await endpointsOf()).length === 4);
    await apps.patchNamespacedDeploymentScale(
      { namespace: ns, name: 'web', body: { spec: { replicas: 1 } } },
      merge,
    );
    await until(
      '1 endpoint left',
      async () =>
        (await own(id1, 'web')).filter((i) => i.attributes[Attr.Record] === 'endpoint').length ===
        1,
    );
    await stopAgent(agent);
  });

  it('deleting the ServiceExport removes its records and the finalizer', async () => {
    const agent = startAgent(c1);
    await exportService(c1, 'gone', [{ ip: '10.1.0.20' }]);
    await until('exported', async () => (await own(id1, 'gone')).length === 2);
    await api(c1).custom.deleteNamespacedCustomObject({ ...SE, namespace: ns, name: 'gone' });
    await until('ServiceExport gone', async () => (await readExport(c1, 'gone')) === undefined);
    expect(await own(id1, 'gone')).toEqual([]);
    await stopAgent(agent);
  });

  it('a restart after a delete missed while down cleans up', async () => {
    let agent = startAgent(c1);
    await exportService(c1, 'missed', [{ ip: '10.1.0.30' }]);
    await until('exported', async () => (await own(id1, 'missed')).length === 2);
    await stopAgent(agent);
    await api(c1).custom.deleteNamespacedCustomObject({ ...SE, namespace: ns, name: 'missed' });
    expect((await readExport(c1, 'missed'))?.metadata.finalizers).toEqual([FINALIZER]);
    agent = startAgent(c1);
    await until('records removed', async () => (await own(id1, 'missed')).length === 0);
    await until('ServiceExport gone', async () => (await readExport(c1, 'missed')) === undefined);
    await stopAgent(agent);
  });

  it('two clusters exporting different ports both get Conflict=PortConflict naming the oldest', async () => {
    const a1 = startAgent(c1);
    const a2 = startAgent(c2);
    await exportService(c1, 'clash', [{ ip: '10.1.0.40' }], 80);
    await until(
      'c1 exported',
      async () => (await condition(c1, 'clash', 'Ready'))?.reason === 'Exported',
    );
    // creationTimestamp has second resolution: make c2's export strictly newer.
    await new Promise((r) => setTimeout(r, 1100));
    await exportService(c2, 'clash', [{ ip: '10.2.0.40' }], 8080);
    for (const c of [c1, c2]) {
      await until(
        `Conflict on ${c.name}`,
        async () => (await condition(c, 'clash', 'Conflict'))?.status === 'True',
      );
      expect(await condition(c, 'clash', 'Conflict')).toMatchObject({
        reason: 'PortConflict',
        message: `Conflicting ports. Using the oldest service export, in "${id1.clusterId}". 1/2 clusters disagree.`,
      });
    }
    expect((await own(id2, 'clash')).length).toBe(2);
    await stopAgent(a1);
    await stopAgent(a2);
  });

  // Issue 12: at default settings (resync 30 min) the cluster that exported first follows the
  // other cluster's export and un-export through the peer watch alone (the change feed, ADR 0018).
  it.each([
    [
      'another port set',
      'PortConflict',
      {
        ports: [
          { name: 'http', port: 80 },
          { name: 'admin', port: 9000 },
        ],
      },
    ],
    ['headless', 'TypeConflict', { clusterIP: 'None' }],
  ] as const)(
    'at default settings c1 raises and clears Conflict when c2 exports %s and un-exports (no local event)',
    async (what, reason, spec) => {
      const name = reason === 'PortConflict' ? 'peer-ports' : 'peer-type';
      const a1 = startAgentProcess(c1.kubeconfigPath, env, [], 'defaults');
      const a2 = startAgentProcess(c2.kubeconfigPath, env, [], 'defaults');
      agents.push(a1, a2);
      // Stopped even when an expectation fails, so later tests do not run beside them.
      onTestFinished(async () => {
        for (const a of [a1, a2]) if (agents.includes(a)) await stopAgent(a);
      });
      /** The Conflict reasons of `c`'s export, or undefined while Conflict is not True. */
      const reasonsOn = async (c: E2eCluster) => {
        const cond = await condition(c, name, 'Conflict');
        return cond?.status === 'True' ? cond.reason.split(',') : undefined;
      };
      await exportService(c1, name, [{ ip: '10.1.0.70' }]);
      await until(
        'c1 exported',
        async () => (await condition(c1, name, 'Ready'))?.reason === 'Exported',
      );
      expect((await condition(c1, name, 'Conflict'))?.status).toBe('False');
      // creationTimestamp has second resolution: c1's export is strictly the oldest.
      await new Promise((r) => setTimeout(r, 1100));
      const before = await callsByOperation(a1);
      await exportService(c2, name, [{ ip: '10.2.0.70' }], 80, spec as V1ServiceSpec);
      const raised = await secondsUntil(
        'c1 Conflict=True',
        async () => (await condition(c1, name, 'Conflict'))?.status === 'True',
      );
      const onC1 = await condition(c1, name, 'Conflict');
      // (Headless: the selector-less headless Service's IP families differ too.)
      expect(await reasonsOn(c1)).toContain(reason);
      expect(onC1?.message).toContain(`in "${id1.clusterId}". 1/2 clusters disagree.`);
      await until('c2 Conflict=True', async () => (await reasonsOn(c2))?.includes(reason));
      await api(c2).custom.deleteNamespacedCustomObject({ ...SE, namespace: ns, name });
      const cleared = await secondsUntil(
        'c1 Conflict=False',
        async () => (await condition(c1, name, 'Conflict'))?.reason === 'NoConflicts',
      );
      const after = await callsByOperation(a1);
      const delta = (op: string) => (after.get(op) ?? 0) - (before.get(op) ?? 0);
      console.log(
        `[peer watch] c2 exports ${what}: c1 Conflict=True/${onC1?.reason} after ${raised.toFixed(1)} s, ` +
          `back to False/NoConflicts ${cleared.toFixed(1)} s after c2 un-exported ` +
          `(c1 meanwhile: ${delta('discoverInstancesRevision')} DiscoverInstancesRevision, ` +
          `${delta('discoverInstances')} DiscoverInstances)`,
      );
      expect(await condition(c1, name, 'Ready')).toMatchObject({ status: 'True' });
      expect(a1.logs.filter((l) => l.includes('reconcile failed'))).toEqual([]);
    },
  );

  it('at default settings the peer watch adds one DiscoverInstancesRevision (the change feed) every 3 s, whatever the number of exports', async () => {
    await exportService(c1, 'idle', [{ ip: '10.1.0.80' }]);
    const windowS = 30;
    /** Calls per exported service per minute of an agent left idle for the window. */
    const idleRates = async (extraArgs: string[]) => {
      const agent = startAgentProcess(c1.kubeconfigPath, env, extraArgs, 'defaults');
      agents.push(agent);
      onTestFinished(async () => {
        if (agents.includes(agent)) await stopAgent(agent);
      });
      await until(
        'exported',
        async () => (await condition(c1, 'idle', 'Ready'))?.reason === 'Exported',
      );
      // Past the start-up reconcile of every export and its reads.
      await until('start-up reconciles done', async () => {
        const depth = await metricValue(agent, 'workqueue_depth\\{name="serviceexport"\\}');
        return depth === 0 && (await metricValue(agent, 'mcs_export_managed_exports')) > 0;
      });
      await new Promise((r) => setTimeout(r, 3000));
      const exportsNow = await metricValue(agent, 'mcs_export_managed_exports');
      const before = await callsByOperation(agent);
      await new Promise((r) => setTimeout(r, windowS * 1000));
      const after = await callsByOperation(agent);
      await stopAgent(agent);
      const rates = new Map(
        [...after].map(([op, n]) => [
          op,
          ((n - (before.get(op) ?? 0)) / exportsNow) * (60 / windowS),
        ]),
      );
      return { exportsNow, rates };
    };
    const show = (rates: Map<string, number>) =>
      [...rates]
        .filter(([, v]) => v > 0)
        .map(([op, v]) => `${op} ${v.toFixed(2)}`)
        .join(', ') || 'none';
    // Same cluster, same exports, every flag at its default; once without the peer check.
    const off = await idleRates(['--peer-check-seconds', '0']);
    const on = await idleRates([]);
    console.log(
      `[peer watch] idle ${windowS} s, ${on.exportsNow} exports; Cloud Map calls per exported ` +
        `service per minute: peer check off: ${show(off.rates)}; on (defaults): ${show(on.rates)}`,
    );
    expect(off.rates.get('discoverInstancesRevision') ?? 0).toBe(0);
    // One check of the feed per round, not one per export: a 3 s period plus up to 10 % jitter
    // is 18 to 20 a minute for the whole agent (one round may straddle the window). Exports
    // whose records are all of feed-writing clusters get no revision check of their own.
    const checks = (on.rates.get('discoverInstancesRevision') ?? 0) * on.exportsNow;
    expect(checks).toBeGreaterThan(14);
    expect(checks).toBeLessThanOrEqual(22);
    // Nothing moved, so nothing was written.
    for (const rates of [off.rates, on.rates]) expect(rates.get('deregisterInstance') ?? 0).toBe(0);
  });

  it('two replicas with leader election: one exports, the other takes over when it stops', async () => {
    const elect = [
      '--leader-elect=true',
      '--lease-duration-seconds',
      '4',
      '--renew-deadline-seconds',
      '3',
      '--retry-period-seconds',
      '1',
    ];
    // The Lease namespace and this replica's name come from the downward API in a Pod.
    const replica = (pod: string) => ({ ...env, POD_NAMESPACE: ns, POD_NAME: pod });
    const a = startAgentProcess(c1.kubeconfigPath, replica('replica-a'), elect);
    agents.push(a);
    await until('replica-a leads', async () => a.logs.some((l) => l.includes('started leading')));
    const b = startAgentProcess(c1.kubeconfigPath, replica('replica-b'), elect);
    agents.push(b);
    await until('replica-b sees the leader', async () =>
      b.logs.some((l) => l.includes('new leader observed')),
    );
    await exportService(c1, 'ha', [{ ip: '10.1.0.60' }]);
    await until('exported by the leader', async () => (await own(id1, 'ha')).length === 2);
    expect(b.logs.some((l) => l.includes('started leading'))).toBe(false);
    await stopAgent(a); // releases the Lease
    await until('replica-b leads', async () => b.logs.some((l) => l.includes('started leading')));
    await setEndpoints(c1, 'ha', [{ ip: '10.1.0.60' }, { ip: '10.1.0.61' }]);
    await until('replica-b exports the change', async () => (await own(id1, 'ha')).length === 3);
    await stopAgent(b);
  });

  it('a restart with nothing changed writes nothing to Cloud Map but its change feed epoch', async () => {
    let agent = startAgent(c1);
    await exportService(c1, 'steady', [{ ip: '10.1.0.50' }, { ip: '10.1.0.51' }]);
    await until(
      'exported',
      async () => (await condition(c1, 'steady', 'Ready'))?.reason === 'Exported',
    );
    await stopAgent(agent);
    await admin?.resetStats();
    agent = startAgent(c1);
    const calls = async (op: string) => {
      const text = await agent.metrics().catch(() => '');
      const re = new RegExp(
        `^mcs_cloudmap_calls_total\\{[^}]*operation="${op}"[^}]*\\} (\\d+)`,
        'gm',
      );
      return [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
    };
    // A few resync rounds (2 s each) of every export in the namespace.
    await until('agent re-read Cloud Map', async () => (await calls('discoverInstances')) >= 12);
    await new Promise((r) => setTimeout(r, 4000));
    // The heartbeat states the new epoch at its next tick once the record is written.
    const stated = async (): Promise<string | undefined> => {
      const [feedNow] = await instancesOf(
        reader,
        FEED_NAMESPACE_NAME,
        feedServiceName(id1.clustersetId),
        {
          [Attr.ClusterId]: id1.clusterId,
        },
      );
      const [hb] = await instancesOf(reader, ns, HEARTBEAT_SERVICE_NAME, {
        [Attr.ClusterId]: id1.clusterId,
      });
      const epoch = hb?.attributes[Attr.FeedEpoch];
      return epoch !== undefined && epoch === feedNow?.attributes[Attr.FeedEpoch]
        ? epoch
        : undefined;
    };
    await until('heartbeat states the new feed epoch', async () => (await stated()) !== undefined);
    // Counted by the agent's own call metrics, and (emulator) by the server. The one write is
    // this incarnation's change feed record: a new epoch with no changes (ADR 0018), which
    // makes importers read everything once, since a process that died may have written
    // without announcing it. The other is the heartbeat, renewed at once to state that new
    // epoch (ADR 0018 decision 12: readers trust the record only while the heartbeat agrees).
    // Records and services are untouched.
    for (const op of ['deregisterInstance', 'createService', 'createHttpNamespace']) {
      expect(await calls(op), op).toBe(0);
    }
    expect(await calls('registerInstance')).toBe(2);
    const [feed] = await instancesOf(
      reader,
      FEED_NAMESPACE_NAME,
      feedServiceName(id1.clustersetId),
      {
        [Attr.ClusterId]: id1.clusterId,
      },
    );
    expect(feed === undefined ? undefined : decodeFeed(feed)).toMatchObject({
      seq: 0,
      changes: [],
    });
    if (admin !== undefined) expect((await admin.stats()).totals.writes).toBe(2);
    expect(await condition(c1, 'steady', 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Exported',
    });
    await stopAgent(agent);
  });
});
