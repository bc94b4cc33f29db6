// Issue 33: IPv6-only and dual-stack clusters, through the real agents and the Cloud Map
// emulator. Its own clusters, one set per IP family (IP_FAMILY of the harness), started once
// for the file: dual stack (d1 exports, d2 imports), IPv6 only (v6-1 exports, v6-2 imports)
// and IPv4 only (v4-1 imports). Every cluster's ClusterProperties name it uniquely in one
// clusterset, and every agent talks to one emulator, so the three sets are one clusterset.
// The exports are Deployments behind Services: kwok gives each fake Pod an IP per family of
// its node's podCIDRs, and the EndpointSlice controller writes a slice per family.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  NetworkingV1Api,
  type KubeConfig,
  type V1EndpointSlice,
  type V1Service,
} from '@kubernetes/client-node';
import { Attr, LABEL_MCS_SERVICE_NAME, type CloudMapInstance } from '@cloudmap-mcs/core';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAppDeployment,
  cloudMapEnv,
  describeLeftovers,
  loadKubeconfig,
  setClusterProperty,
  startClusterset,
  teardownClean,
  waitFor,
  type ClusterInfo,
  type Clusterset,
  type IpFamilyMode,
} from '../src/index.js';
import { startAgent, type AgentKind } from '../src/demo/agents.js';
import { startInProcessEmulator, type RunningEmulator } from '../src/emulator.js';
import { clusterIdProperty, clustersetProperty } from '../src/resources.js';
import { stderrProgress } from '../src/log.js';
import '../src/vitest/context.js';

const CLUSTERSET = 'ipfamily-test';
const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };
// Endpoint addresses must fall in the clusterset's pod ranges (as an operator sets it).
const ALLOWED_CIDRS = '10.0.0.0/8,fd00:10::/32';

interface Cluster {
  readonly id: string;
  readonly info: ClusterInfo;
  readonly kc: KubeConfig;
}

let emulator: RunningEmulator | undefined;
let env: Record<string, string>;
const sets: { set: Clusterset; dir: string }[] = [];
const clusters = new Map<string, Cluster>();
const cluster = (id: string): Cluster => {
  const c = clusters.get(id);
  if (c === undefined) throw new Error(`no cluster ${id}`);
  return c;
};

/** One clusterset of `count` clusters of `family`, named `<prefix>1..` in the clusterset. */
async function startFamily(family: IpFamilyMode, count: number, prefix: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `cloudmap-mcs-e2e-ipfamily-${family}-`));
  const set = await startClusterset({
    stateDir: dir,
    clusters: count,
    ipFamily: family,
    emulator: 'off',
    clusterProperties: false,
    detached: false,
    progress: (m) => stderrProgress(`[${family}] ${m}`),
  });
  sets.push({ set, dir });
  for (const info of set.clusters) {
    const id = `${prefix}${String(info.index)}`;
    const kc = loadKubeconfig(info.kubeconfig);
    await setClusterProperty(kc, clusterIdProperty, id);
    await setClusterProperty(kc, clustersetProperty, CLUSTERSET);
    clusters.set(id, { id, info, kc });
  }
}

/** One agent on `c`, against the shared emulator; stopped by its clusterset's teardown. */
async function agent(kind: AgentKind, c: Cluster): Promise<void> {
  await startAgent(
    kind,
    c.info,
    env,
    90_000,
    ({ health, metrics }) => [
      `--health-port=${String(health)}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
      ...(kind === 'export'
        ? ['--resync-seconds=2']
        : [
            `--metrics-port=${String(metrics)}`,
            '--poll-fast-seconds=1',
            `--allowed-cidrs=${ALLOWED_CIDRS}`,
          ]),
    ],
    {
      POD_NAME: `${c.id}-${kind}-agent`,
      MCS_TEST_TIMINGS: JSON.stringify(
        kind === 'export' ? { heartbeatSeconds: 5 } : { pollSlowSeconds: 2 },
      ),
    },
  );
}

async function createNamespace(c: Cluster, name: string): Promise<void> {
  await c.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}

/**
 * A Deployment of `replicas` fake Pods, a Service for them with `spec`'s IP families, and its
 * ServiceExport. Returns the Service and the Pods' IPs by family once every Pod has them.
 */
async function deployAndExport(
  c: Cluster,
  namespace: string,
  name: string,
  spec: Pick<V1Service['spec'] & object, 'ipFamilies' | 'ipFamilyPolicy'>,
  replicas: number,
): Promise<{ service: V1Service; podIps: Record<string, string[]> }> {
  const labels = await createAppDeployment(c.kc, namespace, name, replicas);
  const service = await c.kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace,
    body: {
      metadata: { name },
      spec: {
        ...spec,
        selector: labels,
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }],
      },
    },
  });
  await c.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...SE,
    namespace,
    body: { apiVersion: `${SE.group}/${SE.version}`, kind: 'ServiceExport', metadata: { name } },
  });
  const families = c.info.network.ipFamily === 'dual' ? 2 : 1;
  const pods = await waitFor(`${String(replicas)} Pods of ${name} with their IPs`, async () => {
    const list = await c.kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: `app=${name}` });
    const running = list.items.filter(
      (p) => p.status?.phase === 'Running' && (p.status.podIPs ?? []).length === families,
    );
    return running.length === replicas ? running : undefined;
  });
  const podIps: Record<string, string[]> = {};
  for (const ip of pods.flatMap((p) => (p.status?.podIPs ?? []).map((i) => i.ip)))
    (podIps[ip.includes(':') ? 'IPv6' : 'IPv4'] ??= []).push(ip);
  for (const v of Object.values(podIps)) v.sort();
  return { service, podIps };
}

interface ServiceImport {
  spec: { ips?: string[]; ipFamilies?: string[]; type: string };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

async function serviceImport(c: Cluster, ns: string, name: string) {
  try {
    return (await c.kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SI, namespace: ns, name })) as ServiceImport;
  } catch {
    return undefined;
  }
}
const readyOf = (si: ServiceImport | undefined) =>
  si?.status?.conditions?.find((c) => c.type === 'Ready');

const importedSlices = async (c: Cluster, ns: string, name: string) =>
  (
    await c.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
      namespace: ns,
      labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
    })
  ).items;

/** Address type → sorted addresses of the imported slices. */
const byFamily = (slices: V1EndpointSlice[]): Record<string, string[]> => {
  const out: Record<string, string[]> = {};
  for (const s of slices)
    (out[s.addressType] ??= []).push(...(s.endpoints ?? []).flatMap((e) => e.addresses));
  for (const v of Object.values(out)) v.sort();
  return out;
};

/** The derived Services (ours) of an import. */
const derivedServices = async (c: Cluster, ns: string, name: string) =>
  (
    await c.kc
      .makeApiClient(CoreV1Api)
      .listNamespacedService({ namespace: ns, labelSelector: `${LABEL_MCS_SERVICE_NAME}=${name}` })
  ).items;

/** The instances our export agent wrote for a service (the emulator's records), by kind. */
async function records(ns: string, name: string): Promise<Record<string, CloudMapInstance[]>> {
  const cm = createSdkCloudMapPort(
    createServiceDiscoveryClient({
      endpoint: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '',
      region: env['AWS_REGION'] ?? 'us-east-1',
      credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }),
    }),
  );
  const out: Record<string, CloudMapInstance[]> = {};
  const namespace = (await cm.listNamespaces()).find((n) => n.name === ns);
  if (namespace === undefined) return out;
  const svc = (await cm.listServices(namespace.id)).find((s) => s.name === name);
  if (svc === undefined) return out;
  for (const i of await cm.listInstances(svc.id))
    (out[i.attributes[Attr.Record] ?? '?'] ??= []).push(i);
  return out;
}

/** Each endpoint instance's address attributes and cluster, sorted by address. */
const addressAttributes = (instances: CloudMapInstance[] = []) =>
  instances
    .map((r) => ({
      v4: r.attributes[Attr.Ipv4],
      v6: r.attributes[Attr.Ipv6],
      cluster: r.attributes[Attr.ClusterId],
    }))
    .sort((a, b) => ((a.v4 ?? a.v6 ?? '') < (b.v4 ?? b.v6 ?? '') ? -1 : 1));

const inCidr = (ip: string, prefix: string): boolean => ip.startsWith(prefix);

beforeAll(async () => {
  const t0 = Date.now();
  emulator = await startInProcessEmulator('required', stderrProgress);
  if (emulator === undefined) throw new Error('the Cloud Map emulator did not start');
  env = cloudMapEnv(emulator.url, emulator.dnsAddress);
  // One after the other: three sets at once starve a 2-core machine (API server start-up
  // timeouts); each start is about 20 s.
  await startFamily('dual', 2, 'd');
  await startFamily('ipv6', 2, 'v6-');
  await startFamily('ipv4', 1, 'v4-');
  stderrProgress(`ipfamily: 5 clusters ready in ${String((Date.now() - t0) / 1000)} s`);
  await agent('export', cluster('d1'));
  await agent('import', cluster('d2'));
  await agent('export', cluster('v6-1'));
  await agent('import', cluster('v6-2'));
  await agent('import', cluster('v4-1'));
  stderrProgress(`ipfamily: agents ready after ${String((Date.now() - t0) / 1000)} s`);
}, 600_000);

afterAll(async () => {
  const left: string[] = [];
  for (const { set, dir } of sets) {
    const report = await set.stop();
    if (teardownClean(report)) rmSync(dir, { recursive: true, force: true });
    else left.push(...describeLeftovers(report), `(state kept in ${dir})`);
  }
  await emulator?.stop();
  if (left.length > 0) throw new Error(`ipfamily clusters' teardown left: ${left.join('; ')}`);
}, 120_000);

describe('the harness starts clusters of each IP family', () => {
  it('the API servers allocate Service IPs of their families (ServiceCIDR kubernetes)', async () => {
    const cidrs = async (c: Cluster) =>
      (await c.kc.makeApiClient(NetworkingV1Api).readServiceCIDR({ name: 'kubernetes' })).spec
        ?.cidrs;
    expect(await cidrs(cluster('d2'))).toEqual(['10.102.0.0/16', 'fd00:10:102::/108']);
    expect(await cidrs(cluster('v6-2'))).toEqual(['fd00:10:102::/108']);
    expect(await cidrs(cluster('v4-1'))).toEqual(['10.101.0.0/16']);
    const node = await cluster('d1').kc.makeApiClient(CoreV1Api).readNode({ name: 'c1-node-0' });
    expect(node.spec?.podCIDRs).toEqual(['10.1.0.0/20', 'fd00:10:1:0::/64']);
  });
});

/** The imported ServiceImport once Ready is `status` (and, for True, it has `ips` IPs). */
async function importedReady(
  c: Cluster,
  ns: string,
  name: string,
  status: 'True' | 'False',
  ips = 0,
) {
  return waitFor(
    `${name} imported in ${c.id} with Ready ${status}`,
    async () => {
      const s = await serviceImport(c, ns, name);
      return readyOf(s)?.status === status && (s?.spec.ips ?? []).length === ips ? s : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
}

/** The imported slices once they hold `count` endpoints of each family in `families`. */
async function slicesWith(c: Cluster, ns: string, name: string, want: Record<string, number>) {
  return waitFor(
    `${name}'s endpoints in ${c.id}: ${JSON.stringify(want)}`,
    async () => {
      const s = await importedSlices(c, ns, name);
      const f = byFamily(s);
      return Object.entries(want).every(([k, n]) => f[k]?.length === n) ? s : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

const families = (si: ServiceImport | undefined) => si?.spec.ipFamilies;

describe('a dual-stack export (RequireDualStack, an IPv4 and an IPv6 EndpointSlice) from d1', () => {
  const ns = 'ipf-dual';
  let podIps: Record<string, string[]> = {};

  beforeAll(async () => {
    for (const id of ['d1', 'd2', 'v6-2', 'v4-1']) await createNamespace(cluster(id), ns);
    const exported = await deployAndExport(
      cluster('d1'),
      ns,
      'web',
      { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] },
      2,
    );
    expect(exported.service.spec?.clusterIPs).toHaveLength(2);
    podIps = exported.podIps;
    expect(Object.keys(podIps).sort()).toEqual(['IPv4', 'IPv6']);
  });

  it('(a) in a dual-stack cluster: a derived Service with both families, one EndpointSlice per family', async () => {
    const d2 = cluster('d2');
    const si = await importedReady(d2, ns, 'web', 'True', 2);
    expect(families(si)).toEqual(['IPv4', 'IPv6']);
    const [ip4, ip6] = si.spec.ips ?? [];
    expect(inCidr(ip4 ?? '', '10.102.')).toBe(true);
    expect(inCidr(ip6 ?? '', 'fd00:10:102::')).toBe(true);
    expect(readyOf(si)?.message).not.toMatch(/not served/);
    const [derived, ...more] = await derivedServices(d2, ns, 'web');
    expect(more).toEqual([]);
    expect(derived?.spec?.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(derived?.spec?.ipFamilyPolicy).toBe('PreferDualStack');
    expect(derived?.spec?.clusterIPs).toEqual(si.spec.ips);

    const slices = await slicesWith(d2, ns, 'web', { IPv4: 2, IPv6: 2 });
    // One slice per family, under the derived Service, from d1: the Pods' addresses (the API
    // server stores IPv6 in RFC 5952 form, which the importer keeps).
    expect(slices.map((s) => s.addressType).sort()).toEqual(['IPv4', 'IPv6']);
    for (const s of slices) {
      expect(s.metadata?.labels?.['kubernetes.io/service-name']).toBe(derived?.metadata?.name);
      expect(s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster']).toBe('d1');
    }
    expect(byFamily(slices)).toEqual(podIps);
    for (const ip of podIps['IPv6'] ?? []) expect(ip).toMatch(/^fd00:10:1::[0-9a-f]{1,4}$/);
  });

  it('(d) the export agent wrote AWS_INSTANCE_IPV6 for the IPv6 endpoints, AWS_INSTANCE_IPV4 for the others', async () => {
    const got = await records(ns, 'web');
    expect(addressAttributes(got['endpoint'])).toEqual([
      ...(podIps['IPv4'] ?? []).map((v4) => ({ v4, v6: undefined, cluster: 'd1' })),
      ...(podIps['IPv6'] ?? []).map((v6) => ({ v4: undefined, v6, cluster: 'd1' })),
    ]);
    expect(got['export']?.map((r) => r.attributes[Attr.IpFamilies])).toEqual(['IPv4,IPv6']);
  });

  it('in an IPv4-only cluster: IPv4 only, and Ready says IPv6 is not served', async () => {
    const v4 = cluster('v4-1');
    const si = await importedReady(v4, ns, 'web', 'True', 1);
    expect(families(si)).toEqual(['IPv4']);
    expect(inCidr(si.spec.ips?.[0] ?? '', '10.101.')).toBe(true);
    expect(readyOf(si)?.message).toContain(
      "the export's IP family IPv6 is not served by this cluster (its Services are IPv4)",
    );
    const [derived] = await derivedServices(v4, ns, 'web');
    expect(derived?.spec?.ipFamilies).toEqual(['IPv4']);
    expect(derived?.spec?.ipFamilyPolicy).toBe('SingleStack');
    const slices = await slicesWith(v4, ns, 'web', { IPv4: 2 });
    expect(byFamily(slices)['IPv4']).toEqual(podIps['IPv4']);
  });

  it('in an IPv6-only cluster: IPv6 only, and Ready says IPv4 is not served', async () => {
    const v6 = cluster('v6-2');
    const si = await importedReady(v6, ns, 'web', 'True', 1);
    expect(families(si)).toEqual(['IPv6']);
    expect(inCidr(si.spec.ips?.[0] ?? '', 'fd00:10:102::')).toBe(true);
    expect(readyOf(si)?.message).toContain(
      "the export's IP family IPv4 is not served by this cluster (its Services are IPv6)",
    );
    const slices = await slicesWith(v6, ns, 'web', { IPv6: 2 });
    expect(byFamily(slices)['IPv6']).toEqual(podIps['IPv6']);
  });
});

describe('an IPv6-only export from v6-1', () => {
  const ns = 'ipf-v6';
  let podIps: Record<string, string[]> = {};

  beforeAll(async () => {
    for (const id of ['v6-1', 'v6-2', 'v4-1']) await createNamespace(cluster(id), ns);
    // No ipFamilies: the IPv6-only cluster gives its only family.
    const exported = await deployAndExport(cluster('v6-1'), ns, 'api', {}, 2);
    expect(exported.service.spec?.ipFamilies).toEqual(['IPv6']);
    podIps = exported.podIps;
    expect(Object.keys(podIps)).toEqual(['IPv6']);
  });

  it('(b) in an IPv6-only cluster: an IPv6 clusterset IP and an IPv6 EndpointSlice', async () => {
    const b = cluster('v6-2');
    const si = await importedReady(b, ns, 'api', 'True', 1);
    expect(families(si)).toEqual(['IPv6']);
    expect(inCidr(si.spec.ips?.[0] ?? '', 'fd00:10:102::')).toBe(true);
    const [derived] = await derivedServices(b, ns, 'api');
    expect(derived?.spec?.ipFamilies).toEqual(['IPv6']);
    expect(derived?.spec?.ipFamilyPolicy).toBe('SingleStack');
    expect(derived?.spec?.clusterIPs).toEqual(si.spec.ips);
    const slices = await slicesWith(b, ns, 'api', { IPv6: 2 });
    expect(slices.map((s) => s.addressType)).toEqual(['IPv6']);
    expect(byFamily(slices)).toEqual(podIps);

    // (d) its records: AWS_INSTANCE_IPV6 only, IP_FAMILIES=IPv6.
    const got = await records(ns, 'api');
    expect(addressAttributes(got['endpoint'])).toEqual(
      (podIps['IPv6'] ?? []).map((v6) => ({ v4: undefined, v6, cluster: 'v6-1' })),
    );
    expect(got['export']?.map((r) => r.attributes[Attr.IpFamilies])).toEqual(['IPv6']);
  });

  it('(c) in an IPv4-only cluster: no derived Service; the ServiceImport says IPv6 is missing', async () => {
    const v4 = cluster('v4-1');
    const si = await importedReady(v4, ns, 'api', 'False');
    expect(readyOf(si)).toMatchObject({
      reason: 'IPFamilyNotSupported',
      message:
        "the export's IP family IPv6 is not served by this cluster (its Services are IPv4): no derived Service, no endpoints",
    });
    expect(si.spec.ips).toBeUndefined();
    expect(families(si)).toEqual(['IPv6']);
    // The import has converged (Ready written after the derived Service step): nothing more
    // is coming, and v6-2 (same export) has had its Service and slices for a while.
    expect(await derivedServices(v4, ns, 'api')).toEqual([]);
    expect(await importedSlices(v4, ns, 'api')).toEqual([]);
  });
});
