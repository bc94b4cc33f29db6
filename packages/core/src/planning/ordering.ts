import type { ClusterExport } from '../model/types.js';

/**
 * Conflict precedence shared by the import merge and (if it wishes) the export side's
 * conflict report: the oldest ServiceExport wins (KEP-1645 "Conflict resolution"), ties are
 * broken by cluster id so every cluster computes the same winner from the same records.
 */
export function compareExportPrecedence(a: ClusterExport, b: ClusterExport): number {
  const byAge = a.properties.exportCreatedAtMs - b.properties.exportCreatedAtMs;
  if (byAge !== 0) return byAge;
  return compareStrings(a.cluster.clusterId, b.cluster.clusterId);
}

/** Code-unit order, independent of the process locale (localeCompare is not). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A sorted copy, oldest export first; the input is left untouched. */
export function byPrecedence(exports: readonly ClusterExport[]): ClusterExport[] {
  return [...exports].sort(compareExportPrecedence);
}
