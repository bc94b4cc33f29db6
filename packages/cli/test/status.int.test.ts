// `cloudmap-mcs status` as a real process on a harness cluster and the run's Cloud Map
// emulator. The objects an agent pair would write are written here directly, so the suite
// checks what status reads and how it compares, independent of the agents.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscoveryV1Api } from '@kubernetes/client-node';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import type { TestNamespace } from '@cloudmap-mcs/e2e';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClustersetReport } from '../src/status/clusterset.js';
import type { StatusReport } from '../src/status/report.js';
import { emulatorPort, seedRecords } from './helpers/cloudmap-seed.js';
import {
  createServiceExport,
  createServiceImport,
  exportOf,
  importedSlice,
  writeMergedKubeconfig,
} from './helpers/mcs-objects.js';
import { runCli } from './helpers/run-cli.js';

const clustersetId = 'e2e-clusterset';
const now = Date.now();

let c1: E2eCluster;
let c2: E2eCluster | undefined;
let ns: TestNamespace;
/** In c1 and c2: exported and imported in c1 only, so c2's import is missing. */
let ns2: TestNamespace | undefined;
let env: Record<string, string>;
let tmp: string;
const unseed: (() => Promise<void>)[] = [];
let closePort: (() => void) | undefined;

// Only the suite's namespace: other suites leave objects (and drift) elsewhere in c1.
const status = async (output: 'json' | 'table') =>
  runCli(['status', '--kubeconfig', c1.kubeconfigPath, '-n', ns.name, '-o', output], env);

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.cloudMapEnv, 'the run needs the Cloud Map emulator').not.toBeNull();
  env = { ...(ctx.cloudMapEnv ?? {}) };
  const clusters = e2eClusters();
  c1 = clusters[0]!;
  c2 = clusters[1];
  tmp = mkdtempSync(join(tmpdir(), 'cli-status-'));
  ns = await e2eNamespace('cli-status', [c1]);
  await createServiceExport(c1.kc, ns.name, 'hello');
  await createServiceImport(c1.kc, ns.name, 'hello', '10.0.0.77', ['c1', 'c2']);
  const discovery = c1.kc.makeApiClient(DiscoveryV1Api);
  await discovery.createNamespacedEndpointSlice({
    namespace: ns.name,
    body: importedSlice('c1', ['10.1.0.1', '10.1.0.2']),
  });
  await discovery.createNamespacedEndpointSlice({
    namespace: ns.name,
    body: importedSlice('c2', ['10.2.0.1']),
  });

  const cm = emulatorPort(env);
  closePort = cm.close;
  const at = now - 60_000;
  unseed.push(
    await seedRecords(
      cm.port,
      [
        exportOf(ns.name, 'c1', clustersetId, ['10.1.0.1', '10.1.0.2'], at),
        exportOf(ns.name, 'c2', clustersetId, ['10.2.0.1'], at),
      ],
      [
        { cluster: { clusterId: 'c1', clustersetId }, renewedAtMs: Date.now() },
        { cluster: { clusterId: 'c2', clustersetId }, renewedAtMs: Date.now() },
      ],
    ),
  );
  if (c2 === undefined) return;
  ns2 = await e2eNamespace('cli-status-set', [c1, c2]);
  await createServiceExport(c1.kc, ns2.name, 'hello');
  await createServiceImport(c1.kc, ns2.name, 'hello', '10.0.0.78', ['c1']);
  await c1.kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace: ns2.name,
    body: importedSlice('c1', ['10.1.0.3']),
  });
  unseed.push(
    await seedRecords(cm.port, [exportOf(ns2.name, 'c1', clustersetId, ['10.1.0.3'], at)], []),
  );
});

afterAll(async () => {
  for (const u of unseed) await u();
  closePort?.();
  await ns?.delete({ wait: false });
  await ns2?.delete({ wait: false });
  rmSync(tmp, { recursive: true, force: true });
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
        ready: '',
        problems: [],
        conditions: [],
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
        `${ns.name}\\s+hello\\s+ClusterSetIP\\s+10\\.0\\.0\\.77\\s+http:80/TCP\\s+-\\s+c1 \\(2/2\\), c2 \\(1/1\\)`,
      ),
    );
    expect(stdout).toMatch(
      new RegExp(`${ns.name}\\s+hello\\s+c2\\s+ClusterSetIP\\s+http:80/TCP\\s+1/1\\s+yes`),
    );
  });

  it('reports drift when the imported endpoints stop matching Cloud Map, and exits 1', async () => {
    await c1.kc
      .makeApiClient(DiscoveryV1Api)
      .deleteNamespacedEndpointSlice({ namespace: ns.name, name: 'hello-c2' });
    const { code, stdout } = await status('json');
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as StatusReport;
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

  it('shows the clusterset in one table with --all-contexts and exits 1 while an import is missing, naming why', async (t) => {
    if (c2 === undefined || ns2 === undefined) return t.skip('needs two clusters');
    const kubeconfig = join(tmp, 'all.kubeconfig');
    writeMergedKubeconfig(kubeconfig, [c1, c2]);
    const args = ['status', '--kubeconfig', kubeconfig, '--all-contexts', '-n', ns2.name];
    const table = await runCli(args, env);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(1);
    expect(table.stdout).toContain('Clusterset e2e-clusterset: c1, c2');
    expect(table.stdout.match(/NAMESPACE\s+SERVICE\s+CLUSTER/g)).toHaveLength(1);
    expect(table.stdout).toMatch(
      new RegExp(
        `${ns2.name}\\s+hello\\s+c2\\s+-\\s+-\\s+missing\\s+Cloud Map has records from c1, but c2 has no ServiceImport`,
      ),
    );
    const json = await runCli([...args, '-o', 'json'], env);
    expect(json.code).toBe(1);
    const { clusterset } = JSON.parse(json.stdout) as { clusterset: ClustersetReport };
    expect(clusterset.cells.map((c) => [c.cluster, c.export, c.records, c.import])).toEqual([
      ['c1', 'exported', '1/1', 'imported (c1 1/1)'],
      ['c2', '-', '-', 'missing'],
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
