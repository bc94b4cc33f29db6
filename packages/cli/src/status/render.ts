/** The human rendering of a status report (pure). */
import { age, ageOfSeconds, table } from '../table.js';
import type { StatusReport } from './report.js';

const counts = (c: { cluster: string; endpoints: number; readyEndpoints: number }) =>
  `${c.cluster} (${c.readyEndpoints}/${c.endpoints})`;

export function renderStatus(r: StatusReport, nowMs: number): string {
  const out: string[] = [];
  const who =
    r.cluster === null
      ? 'cluster identity unknown (no valid ClusterProperties; run `cloudmap-mcs doctor`)'
      : `cluster ${r.cluster.clusterId} in clusterset ${r.cluster.clustersetId}`;
  out.push(`Context ${r.context} (${r.server}): ${who}`, '');

  out.push(`ServiceExports (${r.exports.length})`);
  if (r.exports.length === 0) out.push('  none');
  else
    out.push(
      table(
        ['namespace', 'name', 'valid', 'ready', 'conflict', 'age', 'problems'],
        r.exports.map((e) => [
          e.namespace,
          e.name,
          e.valid || '-',
          e.ready || '-',
          e.conflict || '-',
          age(e.createdAt, nowMs),
          e.problems.join('; '),
        ]),
      ),
    );
  out.push('');

  out.push(`ServiceImports (${r.imports.length})`);
  if (r.imports.length === 0) out.push('  none');
  else
    out.push(
      table(
        [
          'namespace',
          'name',
          'type',
          'ip',
          'ports',
          'ready',
          'clusters (ready/endpoints)',
          'problems',
        ],
        r.imports.map((i) => [
          i.namespace,
          i.name,
          i.type,
          i.ips.join(',') || '-',
          i.ports.join(','),
          i.ready || '-',
          i.clusters.map(counts).join(', ') || '-',
          i.problems.join('; '),
        ]),
      ),
    );
  out.push('');

  const cm = r.cloudMap;
  if (!cm.available) out.push(`Cloud Map: not read (${cm.reason})`);
  else {
    out.push(
      `Cloud Map records of clusterset ${cm.clustersetId} (namespaces read: ${cm.namespaces.join(', ') || 'none'})`,
    );
    const rows = cm.services.flatMap((s) =>
      s.clusters.map((c) => [
        s.namespace,
        s.name,
        c.cluster,
        c.type,
        c.ports.join(','),
        `${c.readyEndpoints}/${c.endpoints}`,
        c.hasExportRecord ? 'yes' : 'no (endpoints only)',
      ]),
    );
    if (rows.length === 0) out.push('  none');
    else
      out.push(
        table(
          ['namespace', 'service', 'cluster', 'type', 'ports', 'ready/endpoints', 'export record'],
          rows,
        ),
      );
    const rejected = cm.services.filter((s) => s.rejected > 0);
    for (const s of rejected)
      out.push(`  ${s.namespace}/${s.name}: ${s.rejected} instance(s) could not be decoded`);
    if (cm.heartbeats.length > 0)
      out.push(
        `  heartbeats: ${cm.heartbeats.map((h) => `${h.cluster} ${ageOfSeconds(h.ageSeconds)} ago`).join(', ')}`,
      );
  }
  out.push('');

  if (r.drift === null)
    out.push('Drift: not computed (needs the cluster identity and the Cloud Map records)');
  else if (r.drift.length === 0) out.push('Drift: none (this cluster matches Cloud Map)');
  else {
    out.push(`Drift (${r.drift.length})`);
    out.push(
      table(
        ['kind', 'service', 'detail'],
        r.drift.map((d) => [d.kind, `${d.namespace}/${d.name}`, d.message]),
      ),
    );
  }
  for (const e of r.errors) out.push(`error: ${e}`);
  return out.join('\n') + '\n';
}
