import type { ClusterExport, ServicePort } from '../model/types.js';

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

/** `byPrecedence` with one export per cluster: should a cluster appear twice, its oldest. */
export function oldestPerCluster(exports: readonly ClusterExport[]): ClusterExport[] {
  const seen = new Set<string>();
  return byPrecedence(exports).filter((e) => {
    if (seen.has(e.cluster.clusterId)) return false;
    seen.add(e.cluster.clusterId);
    return true;
  });
}

export function sameStringMap(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

const portKey = (p: ServicePort): string =>
  `${p.protocol}/${String(p.port)}/${p.name}/${p.appProtocol ?? ''}`;

/**
 * The same ports as the clusterset sees them (name, protocol, number, appProtocol), in any
 * order; `targetPort` is each cluster's own business and not compared.
 */
export function samePortSet(a: readonly ServicePort[], b: readonly ServicePort[]): boolean {
  const keys = (ports: readonly ServicePort[]) => ports.map(portKey).sort(compareStrings).join(',');
  return keys(a) === keys(b);
}

/**
 * The port union of exports in precedence order (KEP-1645): ports merge first by name, then
 * by protocol and port number; the older export keeps a clashing port (copies, in first-seen
 * order), and `clashing` holds the clusters that had a port clash with an older one.
 */
export function unionPorts(ordered: readonly ClusterExport[]): {
  ports: ServicePort[];
  clashing: Set<string>;
} {
  const ports: ServicePort[] = [];
  const clashing = new Set<string>();
  for (const e of ordered) {
    for (const p of e.properties.ports) {
      const same =
        ports.find((m) => m.name === p.name) ??
        ports.find((m) => m.protocol === p.protocol && m.port === p.port);
      if (same === undefined) ports.push({ ...p });
      else if (
        same.name !== p.name ||
        same.port !== p.port ||
        same.protocol !== p.protocol ||
        same.appProtocol !== p.appProtocol
      ) {
        clashing.add(e.cluster.clusterId);
      }
    }
  }
  return { ports, clashing };
}
