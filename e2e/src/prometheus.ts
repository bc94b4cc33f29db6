/**
 * A real Prometheus server per cluster, for the agents the chart installs on real nodes
 * (e2e/test/realnodes/alerts.int.test.ts, `make demo`). One server per cluster, as an
 * operator runs one Prometheus (Operator) per cluster: the chart's PrometheusRule selects the
 * release by `namespace` alone, so two clusters' agents in one server would hide each other.
 *
 * The binary comes from the Go module proxy (deploy/tools/promtool/build.sh prometheus, the
 * same module version as promtool, cached). It runs on the host, bound to 127.0.0.1: the
 * host has no route to pod IPs (docs/harness.md), so it discovers the agents' metrics
 * Services through the API server (kubernetes_sd_configs, role endpointslice, with the
 * cluster's admin kubeconfig) and scrapes each pod through the API server's pod proxy
 * (`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/metrics`), which reaches the pod through
 * the node's CONNECT proxy like exec and logs do. The relabelling is what the Prometheus
 * Operator generates for the chart's ServiceMonitor (port `metrics`, path /metrics, labels
 * namespace, service, pod, container, endpoint, job = the Service, instance = podIP:port), so
 * the PrometheusRule rendered from the chart (templates/prometheusrule.yaml) runs unchanged.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml, type KubeConfig } from '@kubernetes/client-node';
import { agentFullname, chartDir, helm } from './helm/chart.js';
import { repoRoot } from './paths.js';
import { allocatePorts, loopback, releasePortClaims } from './ports.js';
import { spawnProcess, type ProcessRecord } from './processes.js';
import { waitFor } from './wait.js';

/** prometheus, built from the Go module proxy and cached (deploy/tools/promtool/build.sh). */
export function prometheusBinary(): string {
  return execFileSync(join(repoRoot(), 'deploy', 'tools', 'promtool', 'build.sh'), ['prometheus'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/**
 * The `spec.groups` of the chart's PrometheusRule for these values (helm template with
 * metrics.prometheusRule.enabled=true): the rule file the Operator would load.
 */
export async function chartRuleGroups(
  kubeconfig: string,
  release: string,
  namespace: string,
  valuesFile: string,
): Promise<unknown[]> {
  const res = await helm(kubeconfig, [
    'template',
    release,
    chartDir(),
    '--namespace',
    namespace,
    '-f',
    valuesFile,
    '--set',
    'metrics.prometheusRule.enabled=true',
    '--show-only',
    'templates/prometheusrule.yaml',
  ]);
  if (res.status !== 0) throw new Error(`helm template exited ${res.status}: ${res.stderr}`);
  const rule = (loadAllYaml(res.stdout) as { kind?: string; spec?: { groups?: unknown[] } }[]).find(
    (d) => d?.kind === 'PrometheusRule',
  );
  if (!rule?.spec?.groups) throw new Error('helm template rendered no PrometheusRule');
  return rule.spec.groups;
}

export interface PrometheusOptions {
  /** Cluster name: the process and directory name. */
  readonly cluster: string;
  /** The cluster's admin KubeConfig (bearer token, CA): discovery and the pod proxy. */
  readonly kc: KubeConfig;
  /** Its kubeconfig file, for kubernetes_sd_configs. */
  readonly kubeconfigPath: string;
  /** The release's namespace (the ServiceMonitor's namespaceSelector). */
  readonly namespace: string;
  readonly release: string;
  /** Rule groups to load (chartRuleGroups). */
  readonly ruleGroups: readonly unknown[];
  /** Where config, data and the log go. */
  readonly dir: string;
  /** Scrape and rule evaluation interval (default 5 s). */
  readonly intervalSeconds?: number;
  readonly detached: boolean;
}

export interface PrometheusServer {
  readonly url: string;
  readonly process: ProcessRecord;
  readonly logFile: string;
}

/** One scrape job per agent, as the Operator renders the chart's ServiceMonitor for it. */
export function scrapeConfigs(o: PrometheusOptions, files: { ca: string; token: string }) {
  const server = new URL(o.kc.getCurrentCluster()!.server);
  return (['export-agent', 'import-agent'] as const).map((component) => ({
    job_name: `serviceMonitor/${o.namespace}/${agentFullname(o.release, component)}/0`,
    honor_labels: false,
    metrics_path: '/metrics',
    kubernetes_sd_configs: [
      {
        role: 'endpointslice',
        kubeconfig_file: o.kubeconfigPath,
        namespaces: { names: [o.namespace] },
      },
    ],
    // The API server, not the pod: scheme, CA and token are the API server's.
    scheme: 'https',
    tls_config: { ca_file: files.ca },
    authorization: { type: 'Bearer', credentials_file: files.token },
    relabel_configs: [
      // spec.selector.matchLabels (the agent's selector labels) and the endpoint's port.
      ...Object.entries({
        app_kubernetes_io_name: 'cloudmap-mcs',
        app_kubernetes_io_instance: o.release,
        app_kubernetes_io_component: component,
      }).map(([label, value]) => ({
        source_labels: [`__meta_kubernetes_service_label_${label}`],
        regex: value,
        action: 'keep',
      })),
      {
        source_labels: ['__meta_kubernetes_endpointslice_port_name'],
        regex: 'metrics',
        action: 'keep',
      },
      // The labels the Operator sets on every ServiceMonitor target.
      { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
      { source_labels: ['__meta_kubernetes_service_name'], target_label: 'service' },
      { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
      { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
      { source_labels: ['__meta_kubernetes_service_name'], target_label: 'job' },
      { target_label: 'endpoint', replacement: 'metrics' },
      // instance stays podIP:port, as a direct scrape has it; then the request goes to the
      // API server's pod proxy instead.
      { source_labels: ['__address__'], target_label: 'instance' },
      {
        source_labels: [
          '__meta_kubernetes_namespace',
          '__meta_kubernetes_pod_name',
          '__meta_kubernetes_endpointslice_port',
        ],
        regex: '(.+);(.+);(.+)',
        target_label: '__metrics_path__',
        replacement: '/api/v1/namespaces/$1/pods/$2:$3/proxy/metrics',
      },
      { target_label: '__address__', replacement: server.host },
    ],
  }));
}

/** Starts Prometheus for one cluster; resolves once it is ready. */
export async function startPrometheus(o: PrometheusOptions): Promise<PrometheusServer> {
  const bin = prometheusBinary();
  const dir = join(o.dir, o.cluster);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const cluster = o.kc.getCurrentCluster()!;
  const user = o.kc.getCurrentUser()!;
  const files = { ca: join(dir, 'ca.pem'), token: join(dir, 'token') };
  writeFileSync(files.ca, Buffer.from(cluster.caData ?? '', 'base64'));
  writeFileSync(files.token, user.token ?? '', { mode: 0o600 });
  const interval = `${o.intervalSeconds ?? 5}s`;
  const rules = join(dir, 'rules.yaml');
  // JSON is YAML: no YAML writer needed.
  writeFileSync(rules, JSON.stringify({ groups: o.ruleGroups }, null, 1));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify(
      {
        global: {
          scrape_interval: interval,
          evaluation_interval: interval,
          scrape_timeout: interval,
        },
        rule_files: [rules],
        scrape_configs: scrapeConfigs(o, files),
      },
      null,
      1,
    ),
  );
  const port = (await allocatePorts(1, `prometheus-${o.cluster}`))[0]!;
  const logFile = join(dir, 'prometheus.log');
  const proc = spawnProcess({
    name: `${o.cluster}/prometheus`,
    command: bin,
    args: [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${loopback}:${port}`,
      '--storage.tsdb.retention.time=1d',
    ],
    logFile,
    pidFile: join(dir, 'prometheus.pid'),
    cwd: dir,
    detached: o.detached,
  });
  const url = `http://${loopback}:${port}`;
  await waitFor(
    `${o.cluster}: Prometheus ready on ${url} (log ${logFile})`,
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok,
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  releasePortClaims([port]);
  return { url, process: proc, logFile };
}

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? res.status}`);
  return body.data;
}

/** An instant query (/api/v1/query). */
export async function promQuery(server: string, expr: string): Promise<PromSample[]> {
  const data = await api<{ result: PromSample[] }>(
    `${server}/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  return data.result;
}

export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
  readonly activeAt: string;
}

/** Active alerts (/api/v1/alerts): pending and firing. */
export async function promAlerts(server: string): Promise<PromAlert[]> {
  return (await api<{ alerts: PromAlert[] }>(`${server}/api/v1/alerts`)).alerts;
}

export interface PromTarget {
  readonly labels: Record<string, string>;
  readonly health: 'up' | 'down' | 'unknown';
  readonly lastError: string;
}

/** Active scrape targets (/api/v1/targets). */
export async function promTargets(server: string): Promise<PromTarget[]> {
  return (await api<{ activeTargets: PromTarget[] }>(`${server}/api/v1/targets?state=active`))
    .activeTargets;
}
