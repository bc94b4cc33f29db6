// The production wire path (issue 32): both agents as on EKS — no endpoint override, the
// region's AWS host names, TLS, the SDK's standard credential chain, DiscoverInstances* on the
// data- host — reaching an emulator of their own through its gateway with only the proxy and
// CA bundle set. The gateway answers DiscoverInstances* on the data- host only, as AWS does,
// and counts every call per host: the test fails if one reaches the control-plane host.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import type { StatsSnapshot } from '@cloudmap-mcs/cloudmap-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppDeployment, waitFor, type TestNamespace } from '../src/index.js';
import { e2eClusters, e2eNamespace, type E2eCluster } from '../src/vitest/index.js';
import {
  startWirePathAgent,
  startWirePathEmulator,
  wirePathRegion,
  type WirePathAgent,
  type WirePathEmulator,
} from '../src/wire-path.js';

const DATA_OPS = new Set(['DiscoverInstances', 'DiscoverInstancesRevision']);
const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const region = wirePathRegion;

let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
let emu: WirePathEmulator;
let exporter: WirePathAgent | undefined;
let importer: WirePathAgent | undefined;

const cluster = (c: E2eCluster) => ({ name: c.name, kubeconfig: c.kubeconfigPath });

async function deployAndExport(c: E2eCluster, name: string, replicas: number): Promise<void> {
  const labels = await createAppDeployment(c.kc, ns.name, name, replicas);
  await c.kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: ns.name,
    body: {
      metadata: { name },
      spec: {
        selector: labels,
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }],
      },
    },
  });
  await c.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...SE,
    namespace: ns.name,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name },
    },
  });
}

async function scale(c: E2eCluster, name: string, replicas: number): Promise<void> {
  await c.kc.makeApiClient(AppsV1Api).patchNamespacedDeploymentScale({
    namespace: ns.name,
    name,
    body: [{ op: 'replace', path: '/spec/replicas', value: replicas }],
  });
}

/** Endpoints of `name` imported in `c` from `source`. */
async function importedFrom(c: E2eCluster, name: string, source: string): Promise<number> {
  const slices: V1EndpointSlice[] = (
    await c.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
      namespace: ns.name,
      labelSelector: `multicluster.kubernetes.io/service-name=${name},multicluster.kubernetes.io/source-cluster=${source}`,
    })
  ).items;
  return slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
}

/** The gateway's per-host counts of the data operations and of the others. */
function byHost(stats: StatsSnapshot): Record<string, { data: number; control: number }> {
  const out: Record<string, { data: number; control: number }> = {};
  for (const [host, ops] of Object.entries(stats.hosts)) {
    const counts = (out[host] = { data: 0, control: 0 });
    for (const [op, n] of Object.entries(ops)) counts[DATA_OPS.has(op) ? 'data' : 'control'] += n;
  }
  return out;
}

/**
 * Every call came through the gateway, to the hosts expected and no other; DiscoverInstances*
 * arrived on data hosts only (on `discoverOn` among them), the other operations on control
 * hosts only. A DiscoverInstances sent to a control host is counted there (and refused).
 */
function expectWirePath(
  stats: StatsSnapshot,
  expected: { control: string[]; data: string[] },
  discoverOn: string,
): void {
  const hosts = byHost(stats);
  const through = Object.values(hosts).reduce((n, h) => n + h.data + h.control, 0);
  expect(through, 'calls that bypassed the gateway').toBe(stats.totals.calls);
  expect([...expected.control, ...expected.data]).toEqual(
    expect.arrayContaining(Object.keys(hosts)),
  );
  for (const host of expected.data)
    expect(hosts[host]?.control ?? 0, `control operations on ${host}`).toBe(0);
  for (const host of expected.control)
    expect(hosts[host]?.data ?? 0, `DiscoverInstances* on ${host}`).toBe(0);
  expect(hosts[discoverOn]?.data ?? 0, `DiscoverInstances* on ${discoverOn}`).toBeGreaterThan(0);
}

const defaultHosts = {
  control: `servicediscovery.${region}.amazonaws.com`,
  data: `data-servicediscovery.${region}.amazonaws.com`,
};

/** Restarts c2's import agent with `endpoints` added to the wire-path environment. */
async function restartImporter(endpoints: Record<string, string>): Promise<void> {
  await importer?.stop();
  importer = undefined;
  await emu.admin.resetStats();
  importer = await startWirePathAgent('import', cluster(c2), { ...emu.env, ...endpoints });
}

beforeAll(async () => {
  const clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [c1, c2] = [clusters[0]!, clusters[1]!];
  ns = await e2eNamespace('wire');
  emu = await startWirePathEmulator();
  expect(emu.env).not.toHaveProperty('AWS_ENDPOINT_URL_SERVICEDISCOVERY');
  exporter = await startWirePathAgent('export', cluster(c1), emu.env);
  importer = await startWirePathAgent('import', cluster(c2), emu.env);
}, 180_000);

afterAll(async () => {
  await importer?.stop();
  await exporter?.stop();
  await emu?.stop();
  await ns?.delete({ wait: false });
});

describe('the agents on the production wire path, through the gateway', () => {
  it('default AWS hosts: exported from c1, imported in c2, DiscoverInstances* on the data- host only', async () => {
    await deployAndExport(c1, 'web', 2);
    await waitFor(
      'web imported in c2 from c1',
      async () => (await importedFrom(c2, 'web', c1.name)) === 2,
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
    const stats = await emu.admin.stats();
    expect(stats.operations['RegisterInstance']?.succeeded).toBeGreaterThan(0);
    expectWirePath(
      stats,
      { control: [defaultHosts.control], data: [defaultHosts.data] },
      defaultHosts.data,
    );
  });

  it('a FIPS-style endpoint override keeps the data- host: data-servicediscovery-fips', async () => {
    await restartImporter({
      AWS_ENDPOINT_URL_SERVICEDISCOVERY: `https://servicediscovery-fips.${region}.amazonaws.com`,
    });
    await scale(c1, 'web', 3);
    await waitFor('3 endpoints in c2', async () => (await importedFrom(c2, 'web', c1.name)) === 3, {
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    // The export agent in c1 still uses the default hosts; the import agent the FIPS ones.
    const fips = {
      control: `servicediscovery-fips.${region}.amazonaws.com`,
      data: `data-servicediscovery-fips.${region}.amazonaws.com`,
    };
    expectWirePath(
      await emu.admin.stats(),
      { control: [defaultHosts.control, fips.control], data: [defaultHosts.data, fips.data] },
      fips.data,
    );
  });

  it('a VPC endpoint without private DNS: the control and data names, DiscoverInstances* on the data one', async () => {
    const control = `vpce-0a1b2c3d4e5f60718-abcd1234.servicediscovery.${region}.vpce.amazonaws.com`;
    const data = `vpce-0f1e2d3c4b5a69788-dcba4321.data-servicediscovery.${region}.vpce.amazonaws.com`;
    await restartImporter({
      AWS_ENDPOINT_URL_SERVICEDISCOVERY: `https://${control}`,
      AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA: `https://${data}`,
    });
    await waitFor(
      'the import agent polls through the VPC endpoint names',
      async () => (byHost(await emu.admin.stats())[data]?.data ?? 0) > 0,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(await importedFrom(c2, 'web', c1.name)).toBe(3);
    expectWirePath(
      await emu.admin.stats(),
      { control: [defaultHosts.control, control], data: [defaultHosts.data, data] },
      data,
    );
  });
});
