// The chart's alerts and dashboard against a real Prometheus (issue 36): both agents installed
// by the chart in both clusters (two replicas each), one Prometheus per cluster (built from the
// Go module proxy, e2e/src/prometheus.ts) scraping every agent pod with the relabelling the
// Prometheus Operator renders for the chart's ServiceMonitor, loading the chart's
// PrometheusRule as helm renders it. c1's export agent is scaled to 0: the heartbeat alert
// must go pending, then fire within the importers' TTL + one evaluation interval, and
// resolve once the agent is back. Every dashboard query is run against the two servers.
// Figures are printed; docs/operations.md quotes them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { loadClusterset, waitFor, type ClusterInfo, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentFullname,
  agentSelector,
  chartDir,
  chartValues,
  createCredentialsSecret,
  helmInstall,
  helmUninstall,
  releaseNamespace,
  valuesDir,
  waitAgentPods,
  writeValues,
} from '../../src/helm/chart.js';
import { buildAgentImages, importAgentImages } from '../../src/helm/images.js';
import { urlHost } from '../../src/network.js';
import { relayHostPortToNode } from '../../src/nodes/relay.js';
import {
  deployEcho,
  exportService,
  scaleDeployment,
  unexportService,
  waitDeploymentPods,
} from '../../src/nodes/workloads.js';
import { stopProcesses, type ProcessRecord } from '../../src/processes.js';
import {
  chartRuleGroups,
  promAlerts,
  promQuery,
  promTargets,
  startPrometheus,
  type PrometheusServer,
} from '../../src/prometheus.js';

const RELEASE = 'mcs';
const INTERVAL_S = 5;
/** importAgent.heartbeatTtlSeconds (chart default): importers withdraw a cluster after it. */
const TTL_S = 120;
const HEARTBEAT_ALERT = 'CloudMapMCSExportHeartbeatFailing';
/**
 * Dashboard panels that are empty while nothing fails, and why (docs/operations.md#dashboard):
 * the counters they rate are labelled by what failed (operation, reason), so they have no
 * series until the first failure of that kind. Their queries may return data; the others must.
 */
const EMPTY_AT_REST: Record<string, string> = {
  'Read errors': 'mcs_import_cloudmap_read_errors_total{operation}: no failed Cloud Map read yet',
  'Refused records': 'mcs_import_refused_records_total{reason}: no record refused yet',
  Throttles: 'mcs_cloudmap_throttles_total{operation}: Cloud Map has throttled no call yet',
};

const figures: string[] = [];
const figure = (line: string) => {
  figures.push(line);
  console.log(`[alerts figures] ${line}`);
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

let clusters: { e2e: E2eCluster; info: ClusterInfo; prom?: PrometheusServer }[];
let ns: TestNamespace;
const processes: ProcessRecord[] = [];

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.nodes).toBe('real');
  const state = loadClusterset(ctx.stateDir!);
  const e2e = e2eClusters();
  clusters = state.clusters.map((info, i) => ({ e2e: e2e[i]!, info }));
  const images = buildAgentImages();
  ns = await e2eNamespace('alerts');
  await deployEcho(clusters[0]!.e2e.kc, {
    namespace: ns.name,
    name: 'hello',
    replicas: 1,
    cluster: 'c1',
  });
  for (const c of clusters) {
    importAgentImages(c.info, images);
    const relay = await relayHostPortToNode({
      plan: c.info.realNode!,
      port: state.emulator!.port,
      name: 'cloudmap',
      detached: false,
    });
    processes.push(...relay.processes);
    await createCredentialsSecret(c.e2e.kc, releaseNamespace, ctx.cloudMapEnv ?? {});
    const values = chartValues({
      images,
      exportAgent: true,
      importAgent: true,
      cloudMapEndpoint: relay.url,
      region: 'us-east-1',
      allowedCidrs: state.clusters.flatMap((x) => x.network.podCidr.split(',')),
      allowedNamespaces: [ns.name],
    });
    const file = writeValues(valuesDir(state.stateDir), `${c.info.name}-alerts`, values);
    const t0 = Date.now();
    await helmInstall(c.info, RELEASE, file);
    figure(
      `${c.info.name}: helm install (both agents, 2 replicas each) until Ready: ${seconds(Date.now() - t0)}`,
    );
    const t1 = Date.now();
    c.prom = await startPrometheus({
      cluster: c.info.name,
      kc: c.e2e.kc,
      kubeconfigPath: c.info.kubeconfig,
      namespace: releaseNamespace,
      release: RELEASE,
      ruleGroups: await chartRuleGroups(c.info.kubeconfig, RELEASE, releaseNamespace, file),
      dir: join(state.stateDir, 'prometheus'),
      intervalSeconds: INTERVAL_S,
      detached: false,
    });
    processes.push(c.prom.process);
    figure(`${c.info.name}: Prometheus ready at ${c.prom.url} in ${seconds(Date.now() - t1)}`);
  }
  await exportService(clusters[0]!.e2e.kc, ns.name, 'hello');
}, 900_000);

afterAll(async () => {
  await unexportService(clusters[0]!.e2e.kc, ns.name, 'hello').catch(() => undefined);
  // Let the export agent withdraw the records and drop its finalizer before it goes.
  await new Promise((r) => setTimeout(r, 5_000));
  for (const c of clusters ?? []) await helmUninstall(c.info, RELEASE).catch(() => undefined);
  await ns?.delete({ wait: true, timeoutMs: 60_000 }).catch(() => undefined);
  await stopProcesses(processes, 5_000);
  console.log(`[alerts figures]\n  ${figures.join('\n  ')}`);
}, 300_000);

const agentAlerts = async (url: string) =>
  (await promAlerts(url)).filter((a) => a.labels['alertname']?.startsWith('CloudMapMCS'));

describe('a real Prometheus with the chart’s rules', () => {
  it('scrapes every agent replica of its cluster with the ServiceMonitor’s labels', async () => {
    for (const c of clusters) {
      const pods = [
        ...(await waitAgentPods(c.e2e.kc, RELEASE, 'export-agent', 2)),
        ...(await waitAgentPods(c.e2e.kc, RELEASE, 'import-agent', 2)),
      ];
      const t0 = Date.now();
      const targets = await waitFor(
        `${c.info.name}: 4 agent targets up`,
        async () => {
          const ts = await promTargets(c.prom!.url);
          return ts.length === 4 && ts.every((t) => t.health === 'up') ? ts : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(await promTargets(c.prom!.url))}`);
      });
      figure(`${c.info.name}: 4 targets up ${seconds(Date.now() - t0)} after Prometheus was ready`);
      const byPod = new Map(targets.map((t) => [t.labels['pod'], t.labels]));
      for (const p of pods) {
        const agent = p.name.includes('export-agent') ? 'export-agent' : 'import-agent';
        const port = agent === 'export-agent' ? 8081 : 8080;
        expect(byPod.get(p.name)).toMatchObject({
          namespace: releaseNamespace,
          service: `${agentFullname(RELEASE, agent)}-metrics`,
          job: `${agentFullname(RELEASE, agent)}-metrics`,
          container: agent,
          endpoint: 'metrics',
          instance: `${urlHost(p.ip)}:${port}`,
        });
      }
    }
  });

  it('is quiet at rest: no agent alert pending or firing', async () => {
    for (const c of clusters) {
      const t0 = Date.now();
      await waitFor(
        `${c.info.name}: no CloudMapMCS alert active`,
        async () => (await agentAlerts(c.prom!.url)).length === 0,
        {
          timeoutMs: 120_000,
          intervalMs: 1000,
        },
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(await agentAlerts(c.prom!.url))}`);
      });
      figure(
        `${c.info.name}: no agent alert active ${seconds(Date.now() - t0)} after the targets were up`,
      );
    }
  });

  it('every dashboard query returns data (or is documented as empty at rest)', async () => {
    // The work-queue latency panels are quantiles of rate()s: they have numbers only when an
    // item was processed between two scrapes of the window. The export above may have been
    // reconciled before Prometheus first scraped the agents, so make one change now that both
    // agents' queues process (c1 exports a second endpoint, c2 imports it).
    await scaleDeployment(clusters[0]!.e2e.kc, ns.name, 'hello', 2);
    await waitDeploymentPods(clusters[0]!.e2e.kc, ns.name, 'hello', 2);
    const dashboard = JSON.parse(
      readFileSync(join(chartDir(), 'dashboards', 'cloudmap-mcs.json'), 'utf8'),
    ) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const query = async () => {
      const outcomes: { title: string; expr: string; series: number; numbers: number }[] = [];
      for (const p of dashboard.panels)
        for (const t of p.targets ?? []) {
          const expr = t.expr.replaceAll('$namespace', releaseNamespace);
          let series = 0;
          let numbers = 0;
          for (const c of clusters) {
            const r = await promQuery(c.prom!.url, expr);
            series += r.length;
            numbers += r.filter((s) => !Number.isNaN(Number(s.value[1]))).length;
          }
          outcomes.push({ title: p.title, expr: t.expr, series, numbers });
        }
      return outcomes;
    };
    const emptyOf = (outcomes: Awaited<ReturnType<typeof query>>) =>
      outcomes.filter((o) => o.numbers === 0 && EMPTY_AT_REST[o.title] === undefined);
    // Two scrapes at least inside every rate() window.
    await new Promise((r) => setTimeout(r, 3 * INTERVAL_S * 1000));
    // "Age of the last good read" is set by the import agent's listing (every 60 s,
    // pollSlowSeconds): the test namespace's Cloud Map namespace appeared with the export, so
    // the first listing that saw it may still be ahead. Query again until one listing period
    // has passed.
    const t0 = Date.now();
    let outcomes = await query();
    while (emptyOf(outcomes).length > 0 && Date.now() - t0 < 75_000) {
      await new Promise((r) => setTimeout(r, INTERVAL_S * 1000));
      outcomes = await query();
    }
    for (const o of outcomes)
      figure(
        `dashboard "${o.title}": ${o.series} series (${o.numbers} numeric) from c1+c2 — ${o.expr.slice(0, 90)}`,
      );
    figure(`dashboard queries: last try ${seconds(Date.now() - t0)} after the first`);
    const empty = emptyOf(outcomes);
    expect(empty.map((o) => `${o.title}: ${o.expr}`)).toEqual([]);
  });

  it('c1’s export agent scaled to 0: the heartbeat alert goes pending, fires within TTL + one evaluation, and resolves once it is back', async () => {
    const [c1, c2] = clusters as [(typeof clusters)[0], (typeof clusters)[0]];
    const name = agentFullname(RELEASE, 'export-agent');
    const scale = (replicas: number) =>
      scaleDeployment(c1.e2e.kc, releaseNamespace, name, replicas);
    const t0 = Date.now();
    await scale(0);
    let pendingAt: number | undefined;
    const firing = await waitFor(
      `${HEARTBEAT_ALERT} firing in c1’s Prometheus`,
      async () => {
        const a = (await agentAlerts(c1.prom!.url)).find(
          (x) => x.labels['alertname'] === HEARTBEAT_ALERT,
        );
        if (a?.state === 'pending') pendingAt ??= Date.now();
        return a?.state === 'firing' ? a : undefined;
      },
      { timeoutMs: (TTL_S + 60) * 1000, intervalMs: 250 },
    );
    const firingAt = Date.now();
    const pods = await c1.e2e.kc.makeApiClient(CoreV1Api).listNamespacedPod({
      namespace: releaseNamespace,
      labelSelector: agentSelector(RELEASE, 'export-agent'),
    });
    expect(pendingAt, 'seen pending before firing').toBeDefined();
    figure(
      `c1 export agent scaled to 0 → ${HEARTBEAT_ALERT} pending after ${seconds(pendingAt! - t0)}, firing after ${seconds(firingAt - t0)} (activeAt ${firing.activeAt}; export pods left: ${pods.items.length})`,
    );
    expect(firing.labels).toMatchObject({ severity: 'critical', namespace: releaseNamespace });
    expect(firingAt - t0).toBeLessThan((TTL_S + INTERVAL_S) * 1000);
    // c2's Prometheus judges c2's export agent only: nothing fires there.
    expect(
      (await agentAlerts(c2.prom!.url)).filter((a) => a.labels['alertname'] === HEARTBEAT_ALERT),
    ).toEqual([]);

    const t1 = Date.now();
    await scale(2);
    await waitFor(
      `${HEARTBEAT_ALERT} resolved in c1’s Prometheus`,
      async () =>
        !(await agentAlerts(c1.prom!.url)).some((x) => x.labels['alertname'] === HEARTBEAT_ALERT),
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    const resolvedAt = Date.now();
    const heartbeat = await promQuery(
      c1.prom!.url,
      `time() - mcs_export_heartbeat_last_success_timestamp_seconds{namespace="${releaseNamespace}"}`,
    );
    figure(
      `c1 export agent scaled back to 2 → ${HEARTBEAT_ALERT} resolved after ${seconds(resolvedAt - t1)}; heartbeat age then ${heartbeat.map((s) => `${Number(s.value[1]).toFixed(1)} s`).join(', ')}`,
    );
    await waitAgentPods(c1.e2e.kc, RELEASE, 'export-agent', 2);
    expect(heartbeat.length).toBe(1);
  });
});
