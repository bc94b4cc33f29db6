import type { ClusterExport, Heartbeat } from '../model/types.js';

/**
 * Stale clusters (KEP-1645 "Endpoint TTL"): a cluster whose export agent stopped renewing its
 * heartbeat for longer than the TTL keeps its export (ports, type: the service still exists
 * as far as Cloud Map says) but loses its endpoints, so traffic stops going to a cluster that
 * may be gone. A cluster without any heartbeat record is trusted as live: the AWS Go
 * controller writes none, and mixed clustersets must keep working.
 */
export interface Liveness {
  exports: ClusterExport[];
  /** Cluster ids whose endpoints were dropped, sorted. */
  stale: string[];
  /** When the next live heartbeat would expire (ms since the epoch), to re-check then. */
  nextExpiryMs?: number;
}

export function applyHeartbeats(
  exports: readonly ClusterExport[],
  heartbeats: readonly Heartbeat[],
  nowMs: number,
  ttlMs: number,
): Liveness {
  const renewed = new Map<string, number>();
  for (const hb of heartbeats) {
    const id = hb.cluster.clusterId;
    renewed.set(id, Math.max(renewed.get(id) ?? -Infinity, hb.renewedAtMs));
  }
  const stale = new Set<string>();
  let nextExpiryMs: number | undefined;
  const out = exports.map((e) => {
    const last = renewed.get(e.cluster.clusterId);
    if (last === undefined) return e;
    const expires = last + ttlMs;
    if (expires > nowMs) {
      nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expires);
      return e;
    }
    stale.add(e.cluster.clusterId);
    return { ...e, endpoints: [] };
  });
  const result: Liveness = { exports: out, stale: [...stale].sort() };
  if (nextExpiryMs !== undefined) result.nextExpiryMs = nextExpiryMs;
  return result;
}
