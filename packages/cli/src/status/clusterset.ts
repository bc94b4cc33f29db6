/**
 * One view of a clusterset from the status reports of several contexts (pure): per service
 * and cluster, whether it exports, what Cloud Map holds from it, whether it imports, and —
 * when an import is missing or not ready — why, named from the ServiceExport conditions, the
 * Cloud Map records and the ServiceImport conditions.
 */
import type { Drift, ExportRow, ImportRow, RecordRow, StatusReport } from './report.js';

export interface ClustersetCell {
  namespace: string;
  name: string;
  /** The cluster id, or the context when the identity is unknown. */
  cluster: string;
  context: string;
  /** `exported`, `refused: <condition>`, `not ready: <condition>` or `-`. */
  export: string;
  /** `<ready>/<total>` endpoints Cloud Map holds from this cluster, or `-`. */
  records: string;
  /** `Ready`, `Ready=<status>` or `imported` with the clusters, `missing`, or `-`. */
  import: string;
  /** Why the import is missing or not ready; '' when all is well. */
  problem: string;
}

export interface ClustersetReport {
  clustersets: string[];
  contexts: { context: string; cluster: string; errors: string[] }[];
  cells: ClustersetCell[];
  /** Drift of each context other than the missing imports (already in `cells`). */
  drift: (Drift & { context: string })[];
  /** True when an import is missing or not ready, a context drifts, or a read failed. */
  problems: boolean;
}

const key = (ns: string, name: string) => `${ns}/${name}`;

const refusal = (e: ExportRow): string | undefined =>
  e.valid === 'False' ? e.problems.find((p) => p.startsWith('Valid=')) : undefined;

function exportCell(e: ExportRow | undefined): string {
  if (e === undefined) return '-';
  const refused = refusal(e);
  if (refused !== undefined) return `refused: ${refused}`;
  if (e.ready !== 'True' && e.ready !== '')
    return `not ready: ${e.problems.find((p) => p.startsWith('Ready=')) ?? `Ready=${e.ready}`}`;
  return 'exported';
}

/** `Ready`, `Ready=False`, or `imported` when no Ready condition was written; with the clusters. */
function importCell(i: ImportRow): string {
  const state = i.ready === 'True' ? 'Ready' : i.ready === '' ? 'imported' : `Ready=${i.ready}`;
  const from = i.clusters.map((c) => `${c.cluster} ${c.readyEndpoints}/${c.endpoints}`);
  return `${state} (${from.join(', ') || 'no clusters'})`;
}

/** Why `cluster` has no ServiceImport of a service others export. */
function whyMissing(
  cluster: string,
  exporters: { cluster: string; row: ExportRow }[],
  records: RecordRow | undefined,
): string {
  const fromRecords = (records?.clusters ?? []).map((c) => c.cluster);
  if (fromRecords.length > 0)
    return `Cloud Map has records from ${fromRecords.join(', ')}, but ${cluster} has no ServiceImport: its import agent has not imported it (down, not leading, the namespace denied, or not polled yet; run cloudmap-mcs doctor there)`;
  const valid = exporters.filter((x) => refusal(x.row) === undefined);
  if (exporters.length > 0 && valid.length === 0)
    return `refused: ${exporters.map((x) => `ServiceExport in ${x.cluster} ${refusal(x.row) ?? ''}`).join('; ')}`;
  if (valid.length > 0)
    return `no records in Cloud Map from ${valid.map((x) => `${x.cluster} (ServiceExport Ready=${x.row.ready || '?'}${x.row.problems.length > 0 ? `, ${x.row.problems.join('; ')}` : ''})`).join(', ')}: the export agent has not written them (down, denied, or not leading; run cloudmap-mcs doctor there)`;
  return 'no cluster exports it';
}

export function buildClustersetReport(reports: readonly StatusReport[]): ClustersetReport {
  const clusterOf = (r: StatusReport) => r.cluster?.clusterId ?? r.context;
  const services = new Map<string, { namespace: string; name: string }>();
  const records = new Map<string, RecordRow>();
  for (const r of reports) {
    for (const o of [...r.exports, ...r.imports]) services.set(key(o.namespace, o.name), o);
    if (r.cloudMap.available)
      for (const s of r.cloudMap.services) {
        services.set(key(s.namespace, s.name), s);
        const known = records.get(key(s.namespace, s.name));
        if (known === undefined || known.clusters.length < s.clusters.length)
          records.set(key(s.namespace, s.name), s);
      }
  }
  const cells: ClustersetCell[] = [];
  const sorted = [...services.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const [k, { namespace, name }] of sorted) {
    const rec = records.get(k);
    const exporters = reports.flatMap((r) => {
      const row = r.exports.find((e) => key(e.namespace, e.name) === k);
      return row === undefined ? [] : [{ cluster: clusterOf(r), row }];
    });
    for (const r of reports) {
      const cluster = clusterOf(r);
      const exp = r.exports.find((e) => key(e.namespace, e.name) === k);
      const imp = r.imports.find((i) => key(i.namespace, i.name) === k);
      const fromHere = rec?.clusters.find((c) => c.cluster === cluster);
      // Imports are expected where the namespace exists (namespace sameness).
      const expected =
        r.namespaces.includes(namespace) && (exporters.length > 0 || rec !== undefined);
      let problem = '';
      if (imp === undefined && expected) problem = whyMissing(cluster, exporters, rec);
      else if (imp !== undefined && imp.ready === 'False') problem = imp.problems.join('; ');
      else if (
        exp !== undefined &&
        refusal(exp) === undefined &&
        fromHere === undefined &&
        rec !== undefined
      )
        problem = `exported here, but Cloud Map has no records from ${cluster}`;
      cells.push({
        namespace,
        name,
        cluster,
        context: r.context,
        export: exportCell(exp),
        records: fromHere === undefined ? '-' : `${fromHere.readyEndpoints}/${fromHere.endpoints}`,
        import: imp === undefined ? (expected ? 'missing' : '-') : importCell(imp),
        problem,
      });
    }
  }
  const drift = reports.flatMap((r) =>
    (r.drift ?? [])
      .filter((d) => d.kind !== 'import-missing')
      .map((d) => ({ ...d, context: r.context })),
  );
  const contexts = reports.map((r) => ({
    context: r.context,
    cluster: clusterOf(r),
    errors: r.errors,
  }));
  return {
    clustersets: [
      ...new Set(reports.flatMap((r) => (r.cluster === null ? [] : [r.cluster.clustersetId]))),
    ],
    contexts,
    cells,
    drift,
    problems:
      cells.some((c) => c.problem !== '') ||
      drift.length > 0 ||
      contexts.some((c) => c.errors.length > 0),
  };
}
