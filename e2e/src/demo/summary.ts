/** The demo's summary (pure): what was exported, imported, recorded, and how to explore. */
import type { DnsAnswer } from './dns.js';
import type { ServiceRecordsView } from './records.js';
import type { ClusterObservation } from './verify.js';

export interface SummaryInput {
  namespace: string;
  service: string;
  elapsedSeconds: number;
  observations: ClusterObservation[];
  records: ServiceRecordsView;
  /** The service resolved by name through the emulator's DNS server. */
  dns: DnsAnswer;
  cloudMapUrl: string;
  stateDir: string;
  kubeconfigs: { cluster: string; path: string }[];
  /** Health URLs of the agents per cluster. */
  agentUrls: { cluster: string; urls: string[] }[];
  /** `cloudmap-mcs doctor` outcome per cluster. */
  doctor: { cluster: string; ok: boolean; detail: string }[];
  cli: string;
  interactive: boolean;
  /** Real nodes only: resolution and traffic seen from a pod (renderTraffic's lines). */
  traffic?: readonly string[];
  /** The non-Kubernetes service's lines (external.ts), from what the clusters hold. */
  external?: readonly string[];
  /** Real nodes only: the Prometheus server per cluster (e2e/src/prometheus.ts). */
  prometheus?: readonly { cluster: string; url: string; targets: string }[];
}

const list = (xs: readonly string[]) =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1] ?? ''}`;

export function renderSummary(s: SummaryInput): string {
  const svc = `${s.namespace}/${s.service}`;
  const out: string[] = [];
  out.push(
    `Multi-cluster service discovery works: ready in ${Math.round(s.elapsedSeconds)} s.`,
    '',
  );
  const exporters = s.observations.filter((o) => o.exportedEndpoints > 0);
  const conditions = (o: ClusterObservation) =>
    ['Valid', 'Ready', 'Conflict'].map((t) => `${t}=${o.exportConditions[t] ?? '?'}`).join(' ');
  const allSame = new Set(exporters.map(conditions)).size === 1;
  const first = exporters[0];
  out.push(
    `Exported   ${svc} from ${list(exporters.map((o) => `${o.cluster} (${o.exportedEndpoints} pods)`))}`,
    allSame && first !== undefined
      ? `           ServiceExport ${conditions(first)} in ${exporters.length === 2 ? 'both' : list(exporters.map((o) => o.cluster))}`
      : `           ServiceExport ${exporters.map((o) => `${o.cluster}: ${conditions(o)}`).join('; ')}`,
    '',
    'Imported   every cluster holds the merged service:',
  );
  for (const o of s.observations) {
    const si = o.serviceImport;
    const eps = Object.entries(o.importedEndpoints)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, byFamily]) => {
        const counts = Object.entries(byFamily).sort(([a], [b]) => a.localeCompare(b));
        return counts.length === 1
          ? `${counts[0]![1]} from ${c}`
          : `${counts.map(([f, n]) => `${n} ${f}`).join(' + ')} from ${c}`;
      })
      .join(', ');
    out.push(
      `  ${o.cluster}  ServiceImport ${svc}  ${si?.type ?? '?'} ${si?.ips.join(',') || '-'}  clusters [${si?.clusters.join(', ') ?? ''}]  endpoints: ${eps || 'none'}`,
    );
  }
  out.push(
    '',
    `Cloud Map  ${s.cloudMapUrl} (the emulator), namespace ${s.namespace}, service ${s.service}: ${s.records.instances} instances`,
  );
  for (const c of s.records.clusters)
    out.push(
      `  ${c.cluster}  ${c.hasExportRecord ? 'export record + ' : ''}${c.endpoints.length} endpoint instances: ${c.endpoints.join(' ')}`,
    );
  out.push(
    `  heartbeats: ${s.records.heartbeats.map((h) => `${h.cluster} (${h.ageSeconds} s ago)`).join(', ') || 'none'}`,
    '',
    `DNS        ${s.dns.name} (private DNS namespace ${s.namespace}; the emulator answers at ${s.dns.server}, as Route 53 would in the VPC):`,
    ...(s.dns.a.length + s.dns.aaaa.length + s.dns.srv.length === 0
      ? [
          '  (no records: a dual-stack Service gets a Cloud Map service without DNS records; docs/dns-namespaces.md)',
        ]
      : []),
    `  A    ${s.dns.a.join(' ') || 'none'}`,
    ...(s.dns.aaaa.length > 0 ? [`  AAAA ${s.dns.aaaa.join(' ')}`] : []),
    `  SRV  ${s.dns.srv.join(' ') || 'none'}`,
    '',
    ...(s.external === undefined ? [] : [...s.external, '']),
    `Doctor     ${s.doctor.map((d) => `${d.cluster}: ${d.ok ? 'all checks passed' : `FAILED (${d.detail})`}`).join('; ')}`,
    '',
  );
  if (s.traffic !== undefined) out.push(...s.traffic, '');
  if (s.prometheus !== undefined && s.prometheus.length > 0)
    out.push(
      `Prometheus ${s.prometheus.map((p) => `${p.cluster}: ${p.url} (targets ${p.targets})`).join(', ')}: one per cluster, the agents scraped, the chart's alerts loaded`,
      `  ${s.prometheus[0]!.url}/api/v1/alerts, /api/v1/query?query=cloudmap_mcs_build_info, /api/v1/targets`,
      '  HTTP API only: the web UI is built with npm for release tarballs and is not in the Go module',
      '',
    );
  if (s.interactive) {
    const first = s.kubeconfigs[0];
    out.push('Explore (in another terminal, from the repository root):');
    out.push(
      `  export KUBECONFIG=${first?.path ?? ''}   # ${s.kubeconfigs.map((k) => `${k.cluster}: ${k.path}`).join(', ')}`,
    );
    out.push(`  set -a; . ${s.stateDir}/cloudmap.env; set +a`);
    const [host, port] = [
      s.dns.server.slice(0, s.dns.server.lastIndexOf(':')),
      s.dns.server.slice(s.dns.server.lastIndexOf(':') + 1),
    ];
    out.push(`  dig @${host} -p ${port} ${s.dns.name} SRV        # the emulator's DNS`);
    out.push(`  node ${s.cli} status              # exports, imports, Cloud Map records, drift`);
    const urls = s.agentUrls.find((a) => a.cluster === first?.cluster)?.urls ?? [];
    out.push(`  node ${s.cli} doctor ${urls.map((u) => `--agents-url ${u}`).join(' ')}`);
    out.push(
      `  kubectl -n ${s.namespace} get serviceexport,serviceimport,endpointslices   # with kubectl`,
    );
    out.push(
      `  kubectl -n ${s.namespace} scale deployment ${s.service} --replicas=3       # then status again`,
    );
    out.push(
      `  logs: ${s.stateDir}/c1/logs/{export,import}-agent.log (and kube-apiserver.log, ...)`,
    );
    out.push('', 'Running until Ctrl-C, which stops the agents, the clusters and the emulator.');
  }
  return out.join('\n') + '\n';
}
