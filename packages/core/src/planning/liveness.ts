import type { ClusterExport, Heartbeat } from '../model/types.js';

/**
 * Stale clusters (KEP-1645 "Endpoint TTL"): a cluster whose export agent stopped renewing its
 * heartbeat for longer than the TTL keeps its export (ports, type: the service still exists
 * as far as Cloud Map says) but loses its endpoints, so traffic stops going to a cluster that
 * may be gone.
 *
 * Ages are judged at `asOfMs`, the wall time the heartbeats were last confirmed by a
 * successful read, never at "now": while the importer cannot read Cloud Map it knows nothing
 * new, and a frozen heartbeat compared with a running clock would empty every import after
 * one TTL of the importer's own outage (issue 11 item 1).
 *
 * Right after the importer's own blind period (`resumedAtMs`: reads of the heartbeats failed,
 * then succeeded again) nobody is declared stale for one TTL: an outage of Cloud Map
 * usually stopped the exporters' renewals as well, and they need a renewal period to catch
 * up. A cluster that really died during the outage goes stale one TTL after reads resumed.
 *
 * A cluster without any heartbeat record:
 * - records in the AWS Go controller's format (`hasExportRecord: false`) have no heartbeat
 *   concept and are live, so mixed clustersets keep working;
 * - records in our schema (an export record) are written by an export agent that also
 *   renews a heartbeat; without one they are live for one TTL after they were first seen
 *   (`firstSeenMs`, same time base as `asOfMs`) and stale afterwards, so records of a cluster
 *   that never heartbeats cannot stay live forever (issue 11 item 5). Without a first-seen
 *   time they are live (callers that cannot tell).
 */
export interface Liveness {
  exports: ClusterExport[];
  /** Cluster ids whose endpoints were dropped, sorted. */
  stale: string[];
  /**
   * When the next live cluster would expire (ms, in the time base of `asOfMs`), so the caller
   * re-checks once data of that age has been read.
   */
  nextExpiryMs?: number;
}

export interface LivenessTimes {
  /** Per cluster id, when its records were first read (same time base as `asOfMs`). */
  firstSeenMs?: Readonly<Record<string, number>>;
  /** When reads of the heartbeats resumed after failing; undefined if they never failed. */
  resumedAtMs?: number;
}

export function applyHeartbeats(
  exports: readonly ClusterExport[],
  heartbeats: readonly Heartbeat[],
  asOfMs: number,
  ttlMs: number,
  times: LivenessTimes = {},
): Liveness {
  const { firstSeenMs, resumedAtMs } = times;
  // Nobody expires before one TTL of uninterrupted reading after our own outage.
  const graceEnds = resumedAtMs === undefined ? -Infinity : resumedAtMs + ttlMs;
  const renewed = new Map<string, number>();
  for (const hb of heartbeats) {
    const id = hb.cluster.clusterId;
    renewed.set(id, Math.max(renewed.get(id) ?? -Infinity, hb.renewedAtMs));
  }
  const stale = new Set<string>();
  let nextExpiryMs: number | undefined;
  const out = exports.map((e) => {
    const id = e.cluster.clusterId;
    const last =
      renewed.get(id) ??
      (e.hasExportRecord && firstSeenMs !== undefined ? firstSeenMs[id] : undefined);
    if (last === undefined) return e;
    const expires = Math.max(last + ttlMs, graceEnds);
    if (expires > asOfMs) {
      nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expires);
      return e;
    }
    stale.add(id);
    return { ...e, endpoints: [] };
  });
  const result: Liveness = { exports: out, stale: [...stale].sort() };
  if (nextExpiryMs !== undefined) result.nextExpiryMs = nextExpiryMs;
  return result;
}

/**
 * Whether new heartbeats of one namespace change which clusters are live, compared with the
 * heartbeats read before, both judged at the new `asOfMs`. An import depends on heartbeats
 * only through that (and through the expiry it re-checks at on its own, `nextExpiryMs`): a
 * renewal that leaves every cluster live, the steady state, changes nothing, so the importer
 * need not re-run every service of the namespace on it (at 1,000 services and 3 clusters it
 * did, every 10 s: most of its idle CPU). Judging the old heartbeats at the new time counts a
 * cluster that expired meanwhile as stale on both sides (its imports' own requeues dropped
 * it), so its return is a change.
 */
export function heartbeatsChangeLiveness(
  before: readonly Heartbeat[],
  after: readonly Heartbeat[],
  asOfMs: number,
  ttlMs: number,
  resumedAtMs?: number,
): boolean {
  const graceEnds = resumedAtMs === undefined ? -Infinity : resumedAtMs + ttlMs;
  const liveness = (hbs: readonly Heartbeat[]): string => {
    const renewed = new Map<string, number>();
    for (const hb of hbs) {
      const id = hb.cluster.clusterId;
      renewed.set(id, Math.max(renewed.get(id) ?? -Infinity, hb.renewedAtMs));
    }
    return [...renewed]
      .map(([id, last]) => `${id}=${Math.max(last + ttlMs, graceEnds) > asOfMs ? 'live' : 'stale'}`)
      .sort()
      .join(',');
  };
  return liveness(before) !== liveness(after);
}
