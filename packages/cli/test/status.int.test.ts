// `cloudmap-mcs status` as a real process on a harness cluster and the run's Cloud Map
// emulator. The objects an agent pair would write are written here directly, so the suite
// checks what status reads and how it compares, independent of the agents.
import { CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import type { ClusterExport } from '@cloudmap-mcs/core';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import type { TestNamespace } from '@cloudmap-mcs/e2e';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../src/status/report.js';
import { emulatorPort, seedRecords } from './helpers/cloudmap-seed.js';
import { runCli } from './helpers/run-cli.js';

const mcs = { group: 'multicluster.x-k8s.io', version: 'v1beta1' };
const clustersetId = 'e2e-clusterset';
const now = Date.now();

let c1: E2eCluster;
let ns: TestNamespace;
let env: Record<string, string>;
let unseed: (() => Promise<void>) | undefined;
let closePort: (() => void) | undefined;

function exportOf(cluster: string, addresses: string[]): ClusterExport {
  return {
    namespace: ns.name,
    name: 'hello',
    cluster: { clusterId: cluster, clustersetId },
    properties: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: now - 60_000,
    },
    endpoints: addresses.map((address) => ({
      address,
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      conditions: { ready: true, serving: true, terminating: false },
    })),
    hasExportRecord: true,
  };
}

function importedSlice(cluster: string, addresses: string[]) {
  return {
    metadata: {
      name: `hello-${cluster}`,
      labels: {
        'multicluster.kubernetes.io/service-name': 'hello',
        'multicluster.kubernetes.io/source-cluster': cluster,
        'endpointslice.kubernetes.io/managed-by': 'cli-status-int-test',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

const status = async (output: 'json' | 'table') =>
  runCli(['status', '--kubeconfig', c1.kubeconfigPath, '-o', output], env);

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.cloudMapEnv, 'the run needs the Cloud Map emulator').not.toBeNull();
  env = { ...(ctx.cloudMapEnv ?? {}) };
  const clusters = e2eClusters();
  c1 = clusters[0]!;
  ns = await e2eNamespace('cli-status', [c1]);
  const custom = c1.kc.makeApiClient(CustomObjectsApi);
  const namespace = ns.name;

  await custom.createNamespacedCustomObject({
    ...mcs,
    namespace,
    plural: 'serviceexports',
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'hello' },
    },
  });
  const se = (await custom.getNamespacedCustomObject({
    ...mcs,
    namespace,
    plural: 'serviceexports',
    name: 'hello',
  })) as Record<string, unknown>;
  const t = new Date().toISOString();
  await custom.replaceNamespacedCustomObjectStatus({
    ...mcs,
    namespace,
    plural: 'serviceexports',
    name: 'hello',
    body: {
      ...se,
      status: {
        conditions: [
          { type: 'Valid', status: 'True', reason: 'Valid', message: 'ok', lastTransitionTime: t },
          {
            type: 'Ready',
            status: 'True',
            reason: 'Exported',
            message: 'ok',
            lastTransitionTime: t,
          },
          {
            type: 'Conflict',
            status: 'False',
            reason: 'NoConflicts',
            message: 'ok',
            lastTransitionTime: t,
          },
        ],
      },
    },
  });

  await custom.createNamespacedCustomObject({
    ...mcs,
    namespace,
    plural: 'serviceimports',
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'hello' },
      spec: {
        type: 'ClusterSetIP',
        ips: ['10.0.0.77'],
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      },
    },
  });
  const si = (await custom.getNamespacedCustomObject({
    ...mcs,
    namespace,
    plural: 'serviceimports',
    name: 'hello',
  })) as Record<string, unknown>;
  await custom.replaceNamespacedCustomObjectStatus({
    ...mcs,
    namespace,
    plural: 'serviceimports',
    name: 'hello',
    body: { ...si, status: { clusters: [{ cluster: 'c1' }, { cluster: 'c2' }] } },
  });
  const discovery = c1.kc.makeApiClient(DiscoveryV1Api);
  await discovery.createNamespacedEndpointSlice({
    namespace,
    body: importedSlice('c1', ['10.1.0.1', '10.1.0.2']),
  });
  await discovery.createNamespacedEndpointSlice({
    namespace,
    body: importedSlice('c2', ['10.2.0.1']),
  });

  const cm = emulatorPort(env);
  closePort = cm.close;
  unseed = await seedRecords(
    cm.port,
    [exportOf('c1', ['10.1.0.1', '10.1.0.2']), exportOf('c2', ['10.2.0.1'])],
    [
      { cluster: { clusterId: 'c1', clustersetId }, renewedAtMs: Date.now() },
      { cluster: { clusterId: 'c2', clustersetId }, renewedAtMs: Date.now() },
    ],
  );
});

afterAll(async () => {
  await unseed?.();
  closePort?.();
  await ns?.delete({ wait: false });
});

const mine = <T extends { namespace: string }>(rows: T[]) =>
  rows.filter((r) => r.namespace === ns.name);

describe('cloudmap-mcs status', () => {
  it('reports the export with its conditions, the import with per-cluster endpoints, the records, and no drift', async () => {
    const { code, stdout, stderr } = await status('json');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatusReport;
    expect(report.cluster).toEqual({ clusterId: 'c1', clustersetId });
    expect(mine(report.exports)).toMatchObject([
      { name: 'hello', valid: 'True', ready: 'True', conflict: 'False', problems: [] },
    ]);
    expect(mine(report.imports)).toEqual([
      {
        namespace: ns.name,
        name: 'hello',
        type: 'ClusterSetIP',
        ips: ['10.0.0.77'],
        ports: ['http:80/TCP'],
        clusters: [
          { cluster: 'c1', endpoints: 2, readyEndpoints: 2 },
          { cluster: 'c2', endpoints: 1, readyEndpoints: 1 },
        ],
      },
    ]);
    if (!report.cloudMap.available)
      throw new Error(`Cloud Map not read: ${report.cloudMap.reason}`);
    expect(report.cloudMap.namespaces).toContain(ns.name);
    expect(mine(report.cloudMap.services)).toMatchObject([
      {
        name: 'hello',
        rejected: 0,
        clusters: [
          {
            cluster: 'c1',
            endpoints: 2,
            readyEndpoints: 2,
            hasExportRecord: true,
            ports: ['http:80/TCP'],
          },
          { cluster: 'c2', endpoints: 1, readyEndpoints: 1, hasExportRecord: true },
        ],
      },
    ]);
    expect(report.cloudMap.heartbeats.map((h) => h.cluster)).toEqual(
      expect.arrayContaining(['c1', 'c2']),
    );
    expect(mine(report.drift ?? [])).toEqual([]);
  });

  it('renders the same as tables', async () => {
    const { code, stdout } = await status('table');
    expect(code).toBe(0);
    expect(stdout).toContain('cluster c1 in clusterset e2e-clusterset');
    expect(stdout).toMatch(new RegExp(`${ns.name}\\s+hello\\s+True\\s+True\\s+False`));
    expect(stdout).toMatch(
      new RegExp(
        `${ns.name}\\s+hello\\s+ClusterSetIP\\s+10\\.0\\.0\\.77\\s+http:80/TCP\\s+c1 \\(2/2\\), c2 \\(1/1\\)`,
      ),
    );
    expect(stdout).toMatch(
      new RegExp(`${ns.name}\\s+hello\\s+c2\\s+ClusterSetIP\\s+http:80/TCP\\s+1/1\\s+yes`),
    );
  });

  it('reports drift when the imported endpoints stop matching Cloud Map', async () => {
    await c1.kc
      .makeApiClient(DiscoveryV1Api)
      .deleteNamespacedEndpointSlice({ namespace: ns.name, name: 'hello-c2' });
    const report = JSON.parse((await status('json')).stdout) as StatusReport;
    expect(mine(report.drift ?? [])).toEqual([
      {
        kind: 'import-endpoints',
        namespace: ns.name,
        name: 'hello',
        cluster: 'c2',
        message: '0 endpoints imported from c2, Cloud Map has 1',
      },
    ]);
  });

  it('exits 2 and says why when the context does not exist', async () => {
    const { code, stdout, stderr } = await runCli(
      ['status', '--kubeconfig', c1.kubeconfigPath, '--context', 'no-such-context'],
      env,
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('context "no-such-context" is not in the kubeconfig (contexts: c1)');
  });
});
