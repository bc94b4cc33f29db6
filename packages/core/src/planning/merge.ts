import type {
  ClusterExport,
  Endpoint,
  EndpointPort,
  InternalTrafficPolicy,
  IPFamily,
  ServiceImportType,
  ServicePort,
  SessionAffinity,
} from '../model/types.js';
import { detectConflicts, type ConflictReason } from './conflicts.js';
import { compareStrings, oldestPerCluster, unionPorts } from './ordering.js';

/**
 * Merges every cluster's export of one `<namespace>/<name>` into what the import side needs:
 * the ServiceImport spec, the exported labels/annotations, and each source cluster's
 * endpoints with their ports renamed to the merged port names (KEP-1645 "Conflict
 * resolution"). Pure: the inputs are never mutated, the output depends only on the records.
 */

/** A port of the ServiceImport; `serviceName` is its name on the derived Service. */
export interface ImportPort extends EndpointPort {
  /**
   * A Service with more than one port needs every port named, while a ServiceImport may
   * carry one unnamed port among named ones; the derived Service and the slices use this
   * name, the ServiceImport keeps `name`.
   */
  serviceName: string;
}

export interface ImportSpec {
  type: ServiceImportType;
  ports: ImportPort[];
  ipFamilies: IPFamily[];
  sessionAffinity: SessionAffinity;
  sessionAffinityTimeoutSeconds?: number;
  internalTrafficPolicy?: InternalTrafficPolicy;
  trafficDistribution?: string;
}

/** One source cluster's endpoints, ports renamed to the derived Service's port names. */
export interface SourceEndpoints {
  clusterId: string;
  endpoints: Endpoint[];
}

export interface MergedImport {
  namespace: string;
  name: string;
  spec: ImportSpec;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Exporting cluster ids, sorted. */
  clusters: string[];
  /** The cluster whose export won every conflict (the oldest). */
  winner: string;
  sources: SourceEndpoints[];
  /** The same reasons as the export side's Conflict condition (mcs-api). */
  conflicts: ConflictReason[];
}

/**
 * Object keys sorted at every level and undefined values dropped, so equal content serializes
 * to equal text (the import agent's applied-content hash).
 */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => compareStrings(a, b))
        .map(([k, v]) => [k, sortedKeys(v)]),
    );
  return value;
}

/** Families an export declares, or (AWS Go controller records) those of its endpoints. */
function familiesOf(e: ClusterExport): IPFamily[] {
  if (e.properties.ipFamilies.length > 0) return e.properties.ipFamilies;
  const seen = new Set(e.endpoints.map((ep) => ep.addressType));
  return (['IPv4', 'IPv6'] as const).filter((f) => seen.has(f));
}

/**
 * Whether a cluster's port `p` serves merged port `m`: the same protocol and number. A port
 * that only shares the name (`tcp` 4242 where the oldest export says `tcp` 42) does not: traffic
 * to 42 must reach only the clusters that expose 42 (KEP-1645 "Service Port"; the upstream
 * conformance test "same port name but different port numbers" sends ten requests in a row).
 * Its endpoints stay in the import without that port, and the export reports PortConflict.
 */
const serves = (m: ServicePort, p: ServicePort): boolean =>
  m.protocol === p.protocol && m.port === p.port;

function serviceNames(ports: readonly ServicePort[]): ImportPort[] {
  const taken = new Set(ports.map((p) => p.name));
  return ports.map((p) => {
    let serviceName = p.name;
    if (serviceName === '' && ports.length > 1) {
      serviceName = `${p.protocol.toLowerCase()}-${String(p.port)}`;
      while (taken.has(serviceName)) serviceName = `x${serviceName}`.slice(0, 15);
      taken.add(serviceName);
    }
    return { ...p, serviceName };
  });
}

/** Endpoint ports renamed to merged names; ports that serve no merged port are dropped. */
function mapEndpoints(e: ClusterExport, ports: readonly ImportPort[]): Endpoint[] {
  const rename = new Map<string, string>();
  for (const p of e.properties.ports) {
    const m = ports.find((candidate) => serves(candidate, p));
    if (m !== undefined && !rename.has(`${p.protocol}/${p.name}`)) {
      rename.set(`${p.protocol}/${p.name}`, m.serviceName);
    }
  }
  return e.endpoints.map((ep) => ({
    ...ep,
    conditions: { ...ep.conditions },
    ports: ep.ports.flatMap((port): EndpointPort[] => {
      const name = rename.get(`${port.protocol}/${port.name}`);
      return name === undefined ? [] : [{ ...port, name }];
    }),
  }));
}

/** Returns undefined when no cluster exports the service (the import must go). */
export function mergeExports(exports: readonly ClusterExport[]): MergedImport | undefined {
  const ordered = oldestPerCluster(exports);
  const oldest = ordered[0];
  if (oldest === undefined) return undefined;
  const props = oldest.properties;
  // The same rules as the Conflict condition on every ServiceExport, so an import never reports
  // a conflict its exports do not (and the other way round).
  const conflicts = new Set<ConflictReason>(detectConflicts(exports).reasons);

  const merged = unionPorts(ordered);
  const ports = serviceNames(merged.ports);

  // Union of families, the oldest export's order first: a family only some clusters have
  // still gets a clusterset IP, so its endpoints stay reachable (and the conflict is reported).
  const ipFamilies: IPFamily[] = [];
  for (const e of ordered)
    for (const f of familiesOf(e)) if (!ipFamilies.includes(f)) ipFamilies.push(f);

  const spec: ImportSpec = {
    type: props.type,
    ports,
    ipFamilies: ipFamilies.slice(0, 2),
    sessionAffinity: props.sessionAffinity,
  };
  if (props.sessionAffinity === 'ClientIP' && props.sessionAffinityTimeoutSeconds !== undefined) {
    spec.sessionAffinityTimeoutSeconds = props.sessionAffinityTimeoutSeconds;
  }
  if (props.internalTrafficPolicy !== undefined)
    spec.internalTrafficPolicy = props.internalTrafficPolicy;
  if (props.trafficDistribution !== undefined) spec.trafficDistribution = props.trafficDistribution;

  const sources = ordered
    .map((e) => ({ clusterId: e.cluster.clusterId, endpoints: mapEndpoints(e, ports) }))
    .sort((a, b) => compareStrings(a.clusterId, b.clusterId));
  return {
    namespace: oldest.namespace,
    name: oldest.name,
    spec,
    labels: { ...props.exportedLabels },
    annotations: { ...props.exportedAnnotations },
    clusters: sources.map((s) => s.clusterId),
    winner: oldest.cluster.clusterId,
    sources,
    conflicts: [...conflicts].sort(compareStrings),
  };
}
