// Both agents as real processes on harness clusters + the emulator: Deployments (kwok pods),
// Services and ServiceExports in c1/c2, the export agents write Cloud Map, the import agents
// build ServiceImports, derived Services and EndpointSlices in every cluster.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { derivedServiceName } from '@cloudmap-mcs/core';
import { createAppDeployment, waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from './int-helpers.js';

const TTL_SECONDS = 10;
let clusters: E2eCluster[];
let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
let env: Readonly<Record<string, string>>;
const exporters = new Map<string, AgentProcess>();
const importers: AgentProcess[] = [];

const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };

function exporter(c: E2eCluster): AgentProcess {
  return new AgentProcess(
    `export-${c.name}`,
    ['--leader-elect=false', '--resync-seconds', '2', '--background-budget', '0'],
    {
      ...env,
      KUBECONFIG: c.kubeconfigPath,
      MCS_TEST_TIMINGS: JSON.stringify({ heartbeatSeconds: 2 }),
    },
    'export',
  );
}

async function deploy(c: E2eCluster, name: string, replicas: number): Promise<void> {
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

async function serviceImport(
  kc: KubeConfig,
  name: string,
): Promise<
  | { spec: { ips?: string[]; type: string }; status?: { clusters?: { cluster: string }[] } }
  | undefined
> {
  try {
    return (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SI, namespace: ns.name, name })) as never;
  } catch {
    return undefined;
  }
}
async function imported(kc: KubeConfig, name: string): Promise<V1EndpointSlice[]> {
  return (
    await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
      namespace: ns.name,
      labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
    })
  ).items;
}
const perCluster = (slices: V1EndpointSlice[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const s of slices) {
    const c = s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] ?? '?';
    out[c] = (out[c] ?? 0) + (s.endpoints ?? []).length;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
};

beforeAll(async () => {
  clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [c1, c2] = [clusters[0]!, clusters[1]!];
  const cm = e2eContext().cloudMapEnv;
  if (cm === null) throw new Error('these suites need the Cloud Map emulator');
  env = cm;
  ns = await e2eNamespace('both');
  for (const c of [c1, c2]) {
    const e = exporter(c);
    await e.start();
    exporters.set(c.name, e);
    const i = new AgentProcess(
      `import-${c.name}`,
      [
        '--leader-elect=false',
        '--poll-fast-seconds',
        '1',
        '--heartbeat-ttl-seconds',
        String(TTL_SECONDS),
      ],
      {
        ...env,
        KUBECONFIG: c.kubeconfigPath,
        // Liveness counts from the read that saw a renewal change: read well within the TTL.
        MCS_TEST_TIMINGS: JSON.stringify({ pollSlowSeconds: 2, pollHeartbeatSeconds: 1 }),
      },
    );
    await i.start();
    importers.push(i);
  }
}, 180_000);

afterAll(async () => {
  for (const a of [...exporters.values(), ...importers]) await a.stop();
  await ns?.delete({ wait: false });
});

describe('export agent → Cloud Map → import agent', () => {
  it('a Service exported from c1 is imported in c2 and in c1, its clusterset IP the derived ClusterIP', async () => {
    await deploy(c1, 'web', 3);
    for (const c of [c1, c2]) {
      const si = await waitFor(
        `web imported in ${c.name}`,
        async () => {
          const got = await serviceImport(c.kc, 'web');
          return got?.spec.ips?.length === 1 && perCluster(await imported(c.kc, 'web'))['c1'] === 3
            ? got
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const derived = await c.kc
        .makeApiClient(CoreV1Api)
        .readNamespacedService({ namespace: ns.name, name: derivedServiceName(ns.name, 'web') });
      expect(si.spec.ips).toEqual(derived.spec?.clusterIPs);
      const [slice] = await imported(c.kc, 'web');
      expect(slice?.metadata?.labels?.['kubernetes.io/service-name']).toBe(
        derivedServiceName(ns.name, 'web'),
      );
      expect(slice?.ports).toEqual([
        expect.objectContaining({ name: 'http', protocol: 'TCP', port: 8080 }),
      ]);
    }
  });

  it('scaling to 250 pods gives 3 slices in c2, scaling back removes them', async () => {
    await scale(c1, 'web', 250);
    const sizes = async (): Promise<string> =>
      (await imported(c2.kc, 'web'))
        .map((s) => (s.endpoints ?? []).length)
        .sort((a, b) => a - b)
        .join();
    await waitFor('3 slices', async () => (await sizes()) === '50,100,100', {
      timeoutMs: 150_000,
      intervalMs: 1_000,
    });
    await scale(c1, 'web', 4);
    await waitFor('1 slice', async () => (await sizes()) === '4', {
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
  });

  it('exported from c1 and c2, both clusters’ endpoints are imported', async () => {
    await deploy(c2, 'web', 2);
    let seen = '';
    await waitFor(
      'merged in c1',
      async () =>
        (seen = JSON.stringify(perCluster(await imported(c1.kc, 'web')))) === '{"c1":4,"c2":2}',
      {
        timeoutMs: 60_000,
      },
    ).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}; last seen ${seen}; import: ${JSON.stringify((await serviceImport(c1.kc, 'web'))?.status)}`,
      );
    });
    // The status is written after the slices, in the same reconcile: wait for it too, rather
    // than read it the instant the slices show (a race that failed on a loaded machine).
    const clusters = await waitFor('status.clusters of both', async () => {
      const got = (await serviceImport(c1.kc, 'web'))?.status?.clusters;
      return got?.length === 2 ? got : undefined;
    });
    expect(clusters).toEqual([{ cluster: 'c1' }, { cluster: 'c2' }]);
  });

  it('stopping c1’s export agent past the TTL removes c1’s endpoints in c2; restarting brings them back', async () => {
    await exporters.get('c1')!.stop();
    await waitFor(
      'c1 endpoints dropped in c2',
      async () => JSON.stringify(perCluster(await imported(c2.kc, 'web'))) === '{"c2":2}',
      {
        timeoutMs: (TTL_SECONDS + 30) * 1000,
        intervalMs: 1_000,
      },
    );
    expect(await serviceImport(c2.kc, 'web')).toBeDefined();
    await exporters.get('c1')!.start();
    await waitFor(
      'c1 endpoints back in c2',
      async () => JSON.stringify(perCluster(await imported(c2.kc, 'web'))) === '{"c1":4,"c2":2}',
      { timeoutMs: 60_000 },
    );
  });

  it('unexporting everywhere deletes the import everywhere', async () => {
    for (const c of [c1, c2])
      await c.kc
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...SE, namespace: ns.name, name: 'web' });
    for (const c of [c1, c2]) {
      await waitFor(
        `web gone in ${c.name}`,
        async () =>
          (await serviceImport(c.kc, 'web')) === undefined &&
          (await imported(c.kc, 'web')).length === 0,
        { timeoutMs: 60_000 },
      );
    }
  });
});
