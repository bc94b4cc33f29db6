// Nudges (ADR 0018 decision 11): real processes on harness clusters + the emulator. Both
// clusters run both agents with leader election, so each import agent's leader publishes its
// address on its Lease and its cluster's export agent puts it in the change feed. The import
// agents' scheduled feed round, once nudges are trusted, and their listing are set far beyond
// the test: an endpoint change in c1 can only reach c2 within seconds through c1's nudge.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { LABEL_MCS_SERVICE_NAME } from '@cloudmap-mcs/core';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from './int-helpers.js';

let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
const agents: AgentProcess[] = [];
const importers = new Map<string, AgentProcess>();

const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const NAME = 'nudged';
/** Far beyond the test: only a nudge makes c2's import agent read the feed in time. */
const SLOW_SECONDS = '600';

async function exportService(c: E2eCluster): Promise<void> {
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
            containers: [{ name: 'app', image: 'example/app', ports: [{ containerPort: 80 }] }],
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
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 80 }],
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

/** Ready endpoints of the imported slices in `c`, from source cluster c1 or any. */
async function importedEndpoints(c: E2eCluster): Promise<number> {
  const slices = await c.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace: ns.name,
    labelSelector: `${LABEL_MCS_SERVICE_NAME}=${NAME}`,
  });
  return slices.items.reduce(
    (n, s) => n + (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length,
    0,
  );
}

const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000) =>
  waitFor(what, probe, { timeoutMs, intervalMs: 100 });

beforeAll(async () => {
  const clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [c1, c2] = [clusters[0]!, clusters[1]!];
  const env = e2eContext().cloudMapEnv;
  if (env === null) throw new Error('these suites need the Cloud Map emulator');
  ns = await e2eNamespace('nudge');
  const lease = ['--lease-namespace', ns.name];
  for (const [name, c] of [
    ['c1', c1],
    ['c2', c2],
  ] as const) {
    const importer = new AgentProcess(
      `nudge-import-${name}`,
      [
        '--kubeconfig',
        c.kubeconfigPath,
        ...lease,
        '--lease-name',
        `import-${name}`,
        '--poll-feed-nudged-seconds',
        SLOW_SECONDS,
        '--poll-slow-seconds',
        SLOW_SECONDS,
        // Longer than an export agent keeps its nudge targets (30 s) before reading them again
        // at its next write, as the default 60 s is: by then c1's writer knows where c2 is.
        '--nudge-settle-seconds',
        '35',
      ],
      env,
    );
    const exporter = new AgentProcess(
      `nudge-export-${name}`,
      [
        '--kubeconfig',
        c.kubeconfigPath,
        ...lease,
        '--lease-name',
        `export-${name}`,
        '--import-agent-lease',
        `import-${name}`,
      ],
      env,
      'export',
    );
    for (const a of [importer, exporter]) {
      await a.start();
      agents.push(a);
    }
    importers.set(name, importer);
  }
}, 180_000);

afterAll(async () => {
  for (const a of agents) await a.stop();
  await ns?.delete({ wait: false });
});

describe('nudges', () => {
  it('an endpoint change in c1 reaches c2 through its nudge while c2 polls the feed every 600 s', async () => {
    const importC2 = importers.get('c2')!;
    await exportService(c1);
    await until('c2 imports c1’s endpoint', async () => (await importedEndpoints(c2)) === 1);
    await until(
      'c2’s import agent trusts nudges (its address published, every writer nudging)',
      async () => (await importC2.metric('mcs_import_nudges_trusted')) === 1,
      120_000,
    );
    const accepted = await importC2.metric('mcs_import_nudges_total', 'result="accepted"');
    const started = Date.now();
    await c1.kc
      .makeApiClient(AppsV1Api)
      .patchNamespacedDeploymentScale(
        { namespace: ns.name, name: NAME, body: { spec: { replicas: 2 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await until(
      'c2 imports c1’s second endpoint',
      async () => (await importedEndpoints(c2)) === 2,
      30_000,
    );
    const seconds = (Date.now() - started) / 1000;
    // The scheduled feed round and the listing are 600 s apart: without a nudge the change
    // would wait for them (or the hour-scale backstop).
    expect(seconds).toBeLessThan(8);
    expect(await importC2.metric('mcs_import_nudges_total', 'result="accepted"')).toBeGreaterThan(
      accepted,
    );
    expect(await importC2.metric('mcs_import_nudges_missed_total')).toBe(0);
    console.log(
      `[nudges] c1 scaled 1 -> 2; c2 imported the new endpoint ${seconds.toFixed(2)} s later ` +
        `(c2's scheduled feed round every ${SLOW_SECONDS} s)`,
    );
  });
});
