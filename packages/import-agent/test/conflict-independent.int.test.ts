// The export agent reads nothing the import agent writes (ADR 0020): real processes on harness
// clusters + the emulator. c1 runs both agents with leader election, c2 an export agent only.
// c1's import agent is stopped before c2 changes anything: c1's Conflict condition follows c2
// through its own peer watch on the change feed, at its default period, and the ServiceImport
// carries no exporters digest any more.
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from './int-helpers.js';

let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
const agents: AgentProcess[] = [];
let exportC1: AgentProcess;
let importC1: AgentProcess;

const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };
const NAME = 'independent';

async function exportService(c: E2eCluster, port: number): Promise<void> {
  const labels = { app: NAME };
  await c.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: ns.name,
    body: {
      metadata: { name: NAME },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [{ name: 'app', image: 'example/app', ports: [{ containerPort: port }] }],
          },
        },
      },
    },
  });
  await c.kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: ns.name,
    body: {
      metadata: { name: NAME },
      spec: {
        selector: labels,
        ports: [{ name: 'http', protocol: 'TCP', port, targetPort: port }],
      },
    },
  });
  await c.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...SE,
    namespace: ns.name,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: NAME },
    },
  });
}

async function conflict(c: E2eCluster): Promise<{ status: string; reason: string } | undefined> {
  try {
    const se = (await c.kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SE, namespace: ns.name, name: NAME })) as {
      status?: { conditions?: { type: string; status: string; reason: string }[] };
    };
    return se.status?.conditions?.find((x) => x.type === 'Conflict');
  } catch {
    return undefined;
  }
}

async function serviceImportAnnotationsOnC1(): Promise<Record<string, string> | undefined> {
  try {
    const si = (await c1.kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SI, namespace: ns.name, name: NAME })) as {
      metadata?: { annotations?: Record<string, string> };
    };
    return si.metadata?.annotations ?? {};
  } catch {
    return undefined;
  }
}

const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
  waitFor(what, probe, { timeoutMs: 60_000, intervalMs: 250 });

async function secondsUntil(what: string, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  await until(what, probe);
  return (Date.now() - started) / 1000;
}

beforeAll(async () => {
  const clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [c1, c2] = [clusters[0]!, clusters[1]!];
  const env = e2eContext().cloudMapEnv;
  if (env === null) throw new Error('these suites need the Cloud Map emulator');
  ns = await e2eNamespace('independent');
  // The Lease lives in the downward API's namespace, here the test's.
  const inC1 = { ...env, KUBECONFIG: c1.kubeconfigPath, POD_NAMESPACE: ns.name };
  importC1 = new AgentProcess('independent-import-c1', ['--lease-name', 'import-c1'], inC1);
  exportC1 = new AgentProcess(
    'independent-export-c1',
    ['--lease-name', 'export-c1'],
    inC1,
    'export',
  );
  const exportC2 = new AgentProcess(
    'independent-export-c2',
    ['--leader-elect=false'],
    { ...env, KUBECONFIG: c2.kubeconfigPath },
    'export',
  );
  for (const a of [importC1, exportC1, exportC2]) {
    await a.start();
    agents.push(a);
  }
}, 180_000);

afterAll(async () => {
  for (const a of agents) await a.stop();
  await ns?.delete({ wait: false });
});

describe('conflicts without the import agent of the same cluster', () => {
  it('c1 raises and clears Conflict within 10 s when c2 exports other ports and un-exports, its import agent stopped', async () => {
    await exportService(c1, 80);
    await until('c1 Conflict=False', async () => (await conflict(c1))?.reason === 'NoConflicts');
    const annotations = await until('c1’s ServiceImport', serviceImportAnnotationsOnC1);
    expect(Object.keys(annotations)).not.toContain('multicluster.cloudmap-mcs.io/exporters');
    await importC1.stop();
    // creationTimestamp has second resolution: c1's export is strictly the oldest.
    await new Promise((r) => setTimeout(r, 1100));

    await exportService(c2, 81);
    const raised = await secondsUntil(
      'c1 Conflict=True',
      async () => (await conflict(c1))?.status === 'True',
    );
    expect((await conflict(c1))?.reason).toContain('PortConflict');

    await c2.kc
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...SE, namespace: ns.name, name: NAME });
    const cleared = await secondsUntil(
      'c1 Conflict=False again',
      async () => (await conflict(c1))?.reason === 'NoConflicts',
    );
    expect(await exportC1.metric('mcs_export_peer_rounds_total')).toBeGreaterThan(0);
    expect(raised).toBeLessThanOrEqual(10);
    expect(cleared).toBeLessThanOrEqual(10);
    console.log(
      `[peer watch] c1 Conflict=True ${raised.toFixed(1)} s after c2 exported, ` +
        `False again ${cleared.toFixed(1)} s after c2 un-exported (c1's import agent stopped)`,
    );
  });
});
