/**
 * Builds the `status` report from what was read (pure): rows for ServiceExports,
 * ServiceImports and Cloud Map records, and the drift between them.
 */
import type { ClusterExport, ClusterIdentity, ServicePort } from '@cloudmap-mcs/core';
import type { ClustersetRecords } from '../cloudmap/records.js';
import type {
  Condition,
  ImportedSliceInfo,
  ServiceExportInfo,
  ServiceImportInfo,
  ServiceImportPort,
} from '../kube/objects.js';
import type {
  CloudMapSection,
  ClusterEndpoints,
  Drift,
  ExportRow,
  ImportRow,
  RecordRow,
  StatusReport,
} from './report.js';

export interface StatusFacts {
  context: string;
  server: string;
  identity: ClusterIdentity | undefined;
  namespaces: string[];
  exports: ServiceExportInfo[];
  imports: ServiceImportInfo[];
  slices: ImportedSliceInfo[];
  /** Records of the clusterset, or why they could not be read. */
  cloudMap: ClustersetRecords | { error: string };
  nowMs: number;
  errors: string[];
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;
const byKey = <T extends { namespace: string; name: string }>(a: T, b: T) =>
  key(a.namespace, a.name).localeCompare(key(b.namespace, b.name));

/** `Ready` is healthy when True, `Valid` when True, `Conflict` when False or absent. */
const healthy: Record<string, string> = { Valid: 'True', Ready: 'True', Conflict: 'False' };

/** `Type=Status Reason: message` of each condition not in its healthy state. */
export const conditionProblems = (conditions: readonly Condition[]): string[] =>
  conditions
    .filter((c) => (healthy[c.type] ?? 'True') !== c.status)
    .map((c) => `${c.type}=${c.status} ${c.reason}${c.message === '' ? '' : `: ${c.message}`}`);

function exportRow(se: ServiceExportInfo): ExportRow {
  const status = (type: string) => se.conditions.find((c) => c.type === type)?.status ?? '';
  const problems = conditionProblems(se.conditions);
  return {
    namespace: se.namespace,
    name: se.name,
    createdAt: se.createdAt,
    valid: status('Valid'),
    ready: status('Ready'),
    conflict: status('Conflict'),
    problems,
    conditions: se.conditions,
  };
}

const formatPort = (p: ServiceImportPort | ServicePort): string =>
  `${p.name === '' ? '' : `${p.name}:`}${p.port}/${p.protocol}`;

/** Unique endpoint addresses per source cluster of one imported service. */
function sliceEndpoints(slices: ImportedSliceInfo[]): Map<string, ClusterEndpoints> {
  const all = new Map<string, Set<string>>();
  const ready = new Map<string, Set<string>>();
  for (const s of slices) {
    const a = all.get(s.sourceCluster) ?? new Set<string>();
    const r = ready.get(s.sourceCluster) ?? new Set<string>();
    s.addresses.forEach((x) => a.add(x));
    s.readyAddresses.forEach((x) => r.add(x));
    all.set(s.sourceCluster, a);
    ready.set(s.sourceCluster, r);
  }
  const out = new Map<string, ClusterEndpoints>();
  for (const [cluster, a] of all)
    out.set(cluster, { cluster, endpoints: a.size, readyEndpoints: ready.get(cluster)?.size ?? 0 });
  return out;
}

function importRow(si: ServiceImportInfo, slices: ImportedSliceInfo[]): ImportRow {
  const counts = sliceEndpoints(
    slices.filter((s) => s.namespace === si.namespace && s.serviceName === si.name),
  );
  const clusters = [...new Set([...si.clusters, ...counts.keys()])].sort();
  return {
    namespace: si.namespace,
    name: si.name,
    type: si.type,
    ...(si.external === true ? { external: true } : {}),
    ips: si.ips,
    ports: si.ports.map(formatPort),
    clusters: clusters.map(
      (cluster) => counts.get(cluster) ?? { cluster, endpoints: 0, readyEndpoints: 0 },
    ),
    ready: si.conditions.find((c) => c.type === 'Ready')?.status ?? '',
    problems: conditionProblems(si.conditions),
    conditions: si.conditions,
  };
}

function recordRow(
  namespace: string,
  name: string,
  exports: ClusterExport[],
  rejected: number,
): RecordRow {
  return {
    namespace,
    name,
    rejected,
    clusters: exports.map((e) => ({
      cluster: e.cluster.clusterId,
      endpoints: new Set(e.endpoints.map((ep) => ep.address)).size,
      readyEndpoints: new Set(
        e.endpoints.filter((ep) => ep.conditions.ready).map((ep) => ep.address),
      ).size,
      hasExportRecord: e.hasExportRecord,
      type: e.properties.type,
      ports: e.properties.ports.map(formatPort),
      exportCreatedAt:
        e.properties.exportCreatedAtMs > 0
          ? new Date(e.properties.exportCreatedAtMs).toISOString()
          : '',
    })),
  };
}

function cloudMapSection(facts: StatusFacts): CloudMapSection {
  const cm = facts.cloudMap;
  if ('error' in cm) return { available: false, reason: cm.error };
  return {
    available: true,
    clustersetId: cm.clustersetId,
    namespaces: cm.namespaces,
    services: cm.services
      .map((s) => recordRow(s.namespace, s.name, s.exports, s.rejected.length))
      .sort(byKey),
    heartbeats: cm.heartbeats.map((hb) => ({
      cluster: hb.cluster.clusterId,
      renewedAt: new Date(hb.renewedAtMs).toISOString(),
      ageSeconds: Math.max(0, Math.round((facts.nowMs - hb.renewedAtMs) / 1000)),
    })),
  };
}

/** Differences between this cluster's objects and the clusterset's Cloud Map records. */
function computeDrift(
  identity: ClusterIdentity,
  exports: ExportRow[],
  imports: ImportRow[],
  records: RecordRow[],
): Drift[] {
  const drift: Drift[] = [];
  const recordsByKey = new Map(records.map((r) => [key(r.namespace, r.name), r]));
  const importsByKey = new Map(imports.map((i) => [key(i.namespace, i.name), i]));
  const exportsByKey = new Map(exports.map((e) => [key(e.namespace, e.name), e]));
  const me = identity.clusterId;

  for (const e of exports) {
    if (e.valid === 'False') continue; // an invalid export is rightly absent from Cloud Map
    const rec = recordsByKey.get(key(e.namespace, e.name));
    if (rec?.clusters.some((c) => c.cluster === me) !== true)
      drift.push({
        kind: 'not-in-cloudmap',
        namespace: e.namespace,
        name: e.name,
        cluster: me,
        message: `exported here, but Cloud Map has no record of it from ${me} (is the export agent running?)`,
      });
  }
  for (const r of records) {
    const k = key(r.namespace, r.name);
    const clusters = r.clusters.filter((c) => c.hasExportRecord || c.endpoints > 0);
    if (r.clusters.some((c) => c.cluster === me) && !exportsByKey.has(k))
      drift.push({
        kind: 'stale-in-cloudmap',
        namespace: r.namespace,
        name: r.name,
        cluster: me,
        message: `Cloud Map holds records from ${me}, but there is no ServiceExport here`,
      });
    const imp = importsByKey.get(k);
    if (imp === undefined) {
      if (clusters.length > 0)
        drift.push({
          kind: 'import-missing',
          namespace: r.namespace,
          name: r.name,
          message: `Cloud Map has records from ${clusters.map((c) => c.cluster).join(', ')}, but there is no ServiceImport here: the import agent has not imported it (down, not leading, the namespace denied, or not polled yet; run cloudmap-mcs doctor)`,
        });
      continue;
    }
    const want = r.clusters.map((c) => c.cluster).sort();
    const have = imp.clusters.map((c) => c.cluster).sort();
    if (want.join(',') !== have.join(','))
      drift.push({
        kind: 'import-clusters',
        namespace: r.namespace,
        name: r.name,
        message: `ServiceImport lists clusters [${have.join(', ')}], Cloud Map has exports from [${want.join(', ')}]`,
      });
    for (const c of r.clusters) {
      const got = imp.clusters.find((x) => x.cluster === c.cluster);
      if (got !== undefined && got.endpoints !== c.endpoints)
        drift.push({
          kind: 'import-endpoints',
          namespace: r.namespace,
          name: r.name,
          cluster: c.cluster,
          message: `${got.endpoints} endpoints imported from ${c.cluster}, Cloud Map has ${c.endpoints}`,
        });
    }
  }
  for (const i of imports) {
    const rec = recordsByKey.get(key(i.namespace, i.name));
    // A non-Kubernetes service's import has no MCS records by design (ADR 0014).
    if ((rec === undefined || rec.clusters.length === 0) && i.external !== true)
      drift.push({
        kind: 'import-orphaned',
        namespace: i.namespace,
        name: i.name,
        message: 'ServiceImport exists here, but no cluster exports it in Cloud Map',
      });
    const ready = i.conditions.find((c) => c.type === 'Ready');
    // Pending (no clusterset IP yet) is the no-clusterset-ip row below.
    if (ready?.status === 'False' && ready.reason !== 'Pending')
      drift.push({
        kind: 'import-not-ready',
        namespace: i.namespace,
        name: i.name,
        message: `ServiceImport Ready=False ${ready.reason}${ready.message === '' ? '' : `: ${ready.message}`}`,
      });
    if (i.type === 'ClusterSetIP' && i.ips.length === 0)
      drift.push({
        kind: 'no-clusterset-ip',
        namespace: i.namespace,
        name: i.name,
        message: 'ServiceImport of type ClusterSetIP has no clusterset IP yet',
      });
  }
  return drift;
}

export function buildStatusReport(facts: StatusFacts): StatusReport {
  const exports = facts.exports.map(exportRow).sort(byKey);
  const imports = facts.imports.map((si) => importRow(si, facts.slices)).sort(byKey);
  const cloudMap = cloudMapSection(facts);
  const drift =
    cloudMap.available && facts.identity !== undefined
      ? computeDrift(facts.identity, exports, imports, cloudMap.services)
      : null;
  return {
    context: facts.context,
    server: facts.server,
    cluster: facts.identity ?? null,
    namespaces: facts.namespaces,
    exports,
    imports,
    cloudMap,
    drift,
    errors: facts.errors,
  };
}
