import type { ClusterExport, ServiceProperties } from '../model/types.js';
import {
  compareStrings,
  oldestPerCluster,
  samePortSet,
  sameStringMap,
  unionPorts,
} from './ordering.js';

/** The Conflict condition reasons of mcs-api (`ServiceExportReason*Conflict`), as messages name them. */
const HUMAN = {
  PortConflict: 'ports',
  TypeConflict: 'type',
  SessionAffinityConflict: 'session affinity',
  SessionAffinityConfigConflict: 'session affinity config',
  AnnotationsConflict: 'exported annotations',
  LabelsConflict: 'exported labels',
  InternalTrafficPolicyConflict: 'internal traffic policy',
  TrafficDistributionConflict: 'traffic distribution',
  IPFamilyConflict: 'IP families',
} as const;

export type ConflictReason = keyof typeof HUMAN;

export interface ConflictReport {
  /** Sorted; empty when every export agrees (condition `Conflict=False/NoConflicts`). */
  reasons: ConflictReason[];
  /** The oldest export (ties by cluster id); undefined when there is no export at all. */
  winner?: string;
  /**
   * Clusters whose export differs from the oldest one (for ports: a clash with an older export,
   * or another port set), sorted.
   */
  disagreeing: string[];
  /** Condition message: what conflicts, who wins, how many disagree. */
  message: string;
}

const sameFamilies = (a: ServiceProperties, b: ServiceProperties) =>
  [...a.ipFamilies].sort().join(',') === [...b.ipFamilies].sort().join(',');

/**
 * Property checks; `full` is false for what endpoint-only records carry too. Ports are checked
 * twice: a clash (same name, or same protocol and number, with other values) with any export,
 * here below in `detectConflicts`; and a different port set (KEP-1645: the clusterset exposes
 * the union "and raises PortConflict"), only between exports with a full record, since an
 * endpoint-only record's ports are inferred from its endpoints and may be a subset.
 */
const checks: {
  reason: ConflictReason;
  full: boolean;
  differs: (a: ServiceProperties, b: ServiceProperties) => boolean;
}[] = [
  { reason: 'TypeConflict', full: false, differs: (a, b) => a.type !== b.type },
  {
    reason: 'SessionAffinityConflict',
    full: true,
    differs: (a, b) => a.sessionAffinity !== b.sessionAffinity,
  },
  {
    reason: 'SessionAffinityConfigConflict',
    full: true,
    differs: (a, b) =>
      a.sessionAffinity === 'ClientIP' &&
      b.sessionAffinity === 'ClientIP' &&
      a.sessionAffinityTimeoutSeconds !== b.sessionAffinityTimeoutSeconds,
  },
  {
    reason: 'InternalTrafficPolicyConflict',
    full: true,
    // The API server defaults an unset policy to Cluster.
    differs: (a, b) =>
      (a.internalTrafficPolicy ?? 'Cluster') !== (b.internalTrafficPolicy ?? 'Cluster'),
  },
  {
    reason: 'TrafficDistributionConflict',
    full: true,
    differs: (a, b) => a.trafficDistribution !== b.trafficDistribution,
  },
  {
    reason: 'LabelsConflict',
    full: true,
    differs: (a, b) => !sameStringMap(a.exportedLabels, b.exportedLabels),
  },
  {
    reason: 'AnnotationsConflict',
    full: true,
    differs: (a, b) => !sameStringMap(a.exportedAnnotations, b.exportedAnnotations),
  },
  { reason: 'IPFamilyConflict', full: true, differs: (a, b) => !sameFamilies(a, b) },
  { reason: 'PortConflict', full: true, differs: (a, b) => !samePortSet(a.ports, b.ports) },
];

/**
 * Conflicts of one service across every cluster's export (KEP-1645 "Conflict resolution"):
 * the oldest export wins, ties by cluster id, and the same report is raised on every export,
 * so every cluster computes the same answer from the same records. Port sets that differ at
 * all are a PortConflict, disjoint ones included (the ServiceImport still exposes the union;
 * the upstream conformance suite requires the condition on both exports). Exports read from
 * the AWS Go controller's endpoint-only records only take part with their type and port
 * clashes.
 */
export function detectConflicts(exports: readonly ClusterExport[]): ConflictReport {
  const ordered = oldestPerCluster(exports);
  const oldest = ordered[0];
  if (oldest === undefined) return { reasons: [], disagreeing: [], message: 'No exports.' };
  const reasons = new Set<ConflictReason>();
  const disagreeing = unionPorts(ordered).clashing;
  if (disagreeing.size > 0) reasons.add('PortConflict');
  // Properties the winner lacks (endpoint-only records) cannot be compared to anything.
  const base = ordered.find((e) => e.hasExportRecord) ?? oldest;
  for (const e of ordered) {
    for (const check of checks) {
      const comparable = !check.full || (e.hasExportRecord && base.hasExportRecord);
      const against = check.full ? base : oldest;
      if (comparable && check.differs(against.properties, e.properties)) {
        reasons.add(check.reason);
        disagreeing.add(e.cluster.clusterId);
      }
    }
  }
  const sorted = [...reasons].sort(compareStrings);
  const winner = oldest.cluster.clusterId;
  const message =
    sorted.length === 0
      ? `No conflicts among ${ordered.length} exporting cluster(s).`
      : `Conflicting ${sorted.map((r) => HUMAN[r]).join(', ')}. Using the oldest service export, ` +
        `in "${winner}". ${disagreeing.size}/${ordered.length} clusters disagree.`;
  return { reasons: sorted, winner, disagreeing: [...disagreeing].sort(compareStrings), message };
}

/** The Conflict condition's reason: the reasons comma-joined, or NoConflicts. */
export const conflictConditionReason = (report: ConflictReport): string =>
  report.reasons.length === 0 ? 'NoConflicts' : report.reasons.join(',');
