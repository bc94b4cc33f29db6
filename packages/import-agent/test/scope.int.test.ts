// Issue 11 item 3 "Done when": no ServiceImport appears in a denied namespace, and the import
// caps hold — the import agent as a real process on a harness cluster, records written into
// the Cloud Map emulator as a hostile writer would.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ClusterExport, Endpoint } from '@cloudmap-mcs/core';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { props } from './cloudmap-fixtures.js';
import { AgentProcess, Publisher, testCloudMap } from './int-helpers.js';

const CLUSTERSET = 'e2e-clusterset';
// A remote exporter: the agent runs in harness cluster c1, which refuses records claiming its
// own id unless it exports the service itself (ADR 0006).
const EXPORTER = 'r1';
const PER_NAMESPACE = 2;
let cluster: E2eCluster;
let ns: TestNamespace;
let publisher: Publisher;
let agent: AgentProcess;
const published: [string, string][] = [];

const eps: Endpoint[] = [
  {
    address: '10.1.0.1',
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    conditions: { ready: true, serving: true, terminating: false },
  },
];
async function publish(namespace: string, name: string): Promise<void> {
  const exp: ClusterExport = {
    namespace,
    name,
    cluster: { clusterId: EXPORTER, clustersetId: CLUSTERSET },
    properties: props(),
    endpoints: eps,
    hasExportRecord: true,
  };
  await publisher.publish(exp);
  published.push([namespace, name]);
}
async function ourImports(kc: KubeConfig, namespace: string): Promise<string[]> {
  const list = (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    group: 'multicluster.x-k8s.io',
    version: 'v1beta1',
    namespace,
    plural: 'serviceimports',
  })) as { items: { metadata: { name: string } }[] };
  return list.items.map((i) => i.metadata.name).sort();
}
async function ourServices(kc: KubeConfig, namespace: string): Promise<string[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedService({
    namespace,
    labelSelector: 'app.kubernetes.io/managed-by=cloudmap-mcs-import-agent',
  });
  return list.items.map((s) => s.metadata?.name ?? '');
}

beforeAll(async () => {
  const ctx = e2eContext();
  cluster = e2eClusters()[0]!;
  const env = ctx.cloudMapEnv;
  if (env === null) throw new Error('this suite needs the Cloud Map emulator (MCS_E2E_EMULATOR)');
  publisher = new Publisher(testCloudMap(env));
  ns = await e2eNamespace('scope');
  agent = new AgentProcess(
    `import-scope-${cluster.name}`,
    [
      '--leader-elect=false',
      '--poll-fast-seconds',
      '1',
      '--max-imports-per-namespace',
      String(PER_NAMESPACE),
    ],
    {
      ...env,
      KUBECONFIG: cluster.kubeconfigPath,
      MCS_TEST_TIMINGS: JSON.stringify({ pollSlowSeconds: 2 }),
    },
  );
  await agent.start();
}, 180_000);

afterAll(async () => {
  // Leave no hostile records behind for the suites that run after this one.
  for (const [namespace, name] of published)
    await publisher.unpublish(namespace, name, EXPORTER).catch(() => undefined);
  await agent?.stop();
  await ns?.delete({ wait: false });
});

describe('import scope', () => {
  it('creates nothing in kube-system or default for Cloud Map services there, and counts the refusals', async () => {
    const kc = cluster.kc;
    await publish('kube-system', 'kubernetes');
    await publish('default', 'kubernetes');
    await publish(ns.name, 'allowed');
    // The allowed one arriving shows the agent has seen this round of records.
    await waitFor('allowed import', async () =>
      (await ourImports(kc, ns.name)).includes('allowed'),
    );
    await waitFor(
      'namespace-denied refusals counted',
      async () =>
        (await agent.metric('mcs_import_refused_records_total', 'reason="namespace-denied"')) >= 2,
    );
    // Two more slow rounds, and still nothing there.
    await new Promise((r) => setTimeout(r, 4_500));
    for (const denied of ['kube-system', 'default']) {
      expect(await ourImports(kc, denied)).toEqual([]);
      expect(await ourServices(kc, denied)).toEqual([]);
    }
  });

  it(`creates at most ${String(PER_NAMESPACE)} imports in one namespace; the others are refused`, async () => {
    const kc = cluster.kc;
    for (const name of ['cap-a', 'cap-b', 'cap-c']) await publish(ns.name, name);
    // `allowed` from the previous case already holds one of the two slots.
    await waitFor(
      'import-cap refusals',
      async () =>
        (await agent.metric('mcs_import_refused_records_total', 'reason="import-cap"')) >= 2,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const names = await ourImports(kc, ns.name);
    expect(names).toHaveLength(PER_NAMESPACE);
    expect(names).toContain('allowed');
    expect(await ourServices(kc, ns.name)).toHaveLength(PER_NAMESPACE);
  });

  it('refuses Cloud Map service names that cannot be Kubernetes names, without reconcile errors', async () => {
    const errors = () => agent.metric('mcs_reconcile_total', 'result="error"');
    const before = await errors();
    for (const name of ['Evil_Name', '_underscore']) await publish(ns.name, name);
    await waitFor(
      'invalid-service-name refusals',
      async () =>
        (await agent.metric('mcs_import_refused_records_total', 'reason="invalid-service-name"')) >=
        2,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await errors()).toBe(before);
  });
});
