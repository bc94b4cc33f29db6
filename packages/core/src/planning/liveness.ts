import type { ClusterExport, Heartbeat } from '../model/types.js';

/**
 * Stale clusters (KEP-1645 "Endpoint TTL"): a cluster whose export agent stopped renewing its
 * heartbeat for longer than the TTL keeps its export (ports, type: the service still exists
 * as far as Cloud Map says) but loses its endpoints, so traffic stops going to a cluster that
 * may be gone.
 *
 * Liveness is judged on the reader's own clock, never by comparing the writer's renewal time
 * with it (issue 31): the reader notes when it *saw a cluster's renewal value change*
 * (`sightRenewals`), and the cluster is live while that sighting is younger than the TTL. This
 * is how kube-controller-manager judges node Leases (it records when it saw `renewTime` move,
 * on its own clock). The writer's clock may be minutes off, and a forged renewal time years
 * ahead is just a value that never changes again; neither moves an expiry.
 *
 * Ages are judged at `asOfMs`, the reader's time of its last successful read of the
 * heartbeats, never at "now": while the importer cannot read Cloud Map it sees no change, and
 * a frozen sighting compared with a running clock would empty every import after one TTL of
 * the importer's own outage (issue 11 item 1).
 *
 * Right after the importer's own blind period (`resumedAtMs`: reads of the heartbeats failed,
 * then succeeded again) nobody is declared stale for one TTL: an outage of Cloud Map
 * usually stopped the exporters' renewals as well, and they need a renewal period to catch
 * up. A cluster that really died during the outage goes stale one TTL after reads resumed.
 *
 * A heartbeat seen for the first time counts as a change seen then (the reader cannot tell
 * how old it is without trusting the writer's clock): after a restart of the importer, a
 * cluster whose heartbeat no longer moves goes stale one TTL after the first read.
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
  /**
   * The same, for clusters judged by when their records were first seen (no heartbeat):
   * only the service knows those. Heartbeat expiries are the namespace's
   * (`heartbeatLiveness`), which the importer watches once per namespace.
   */
  nextFirstSeenExpiryMs?: number;
}

/** What one reader knows of one cluster's heartbeat in one namespace. */
export interface RenewalSighting {
  /** The renewal value last read (the writer's clock): compared for change, never aged. */
  readonly renewedAtMs: number;
  /** When this reader first read that value, on its own clock (the time base of `asOfMs`). */
  readonly seenAtMs: number;
}

/**
 * Per cluster id, its heartbeat in one namespace as this reader last saw it change. Holds the
 * clusters of the latest read only, so it is as large as the heartbeat service.
 */
export type RenewalSightings = ReadonlyMap<string, RenewalSighting>;

/**
 * The sightings after a successful read at `readAtMs` (the reader's clock) of a namespace's
 * heartbeats: a cluster whose renewal value is unchanged keeps its sighting; a changed or new
 * one is seen at `readAtMs`; a cluster whose heartbeat is gone is forgotten. `heartbeats` must
 * be decoded (`decodeHeartbeats`: one per cluster, each from the instance its id names).
 */
export function sightRenewals(
  before: RenewalSightings | undefined,
  heartbeats: readonly Heartbeat[],
  readAtMs: number,
): RenewalSightings {
  const out = new Map<string, RenewalSighting>();
  for (const { cluster, renewedAtMs } of heartbeats) {
    const known = before?.get(cluster.clusterId);
    out.set(
      cluster.clusterId,
      known?.renewedAtMs === renewedAtMs ? known : { renewedAtMs, seenAtMs: readAtMs },
    );
  }
  return out;
}

/**
 * When this reader last saw `clusterId`'s heartbeat renewal change (its own clock), or
 * undefined when the cluster has no heartbeat in the namespace. A cluster's heartbeat vouches
 * for its records while `asOfMs < heartbeatExpiresAtMs(...)` of this time.
 */
export function lastRenewalSeenMs(
  sightings: RenewalSightings | undefined,
  clusterId: string,
): number | undefined {
  return sightings?.get(clusterId)?.seenAtMs;
}

/**
 * When a cluster last seen renewing at `seenAtMs` stops being live: one TTL later, and never
 * within one TTL of reads resuming after this reader's own outage (`resumedAtMs`).
 */
export function heartbeatExpiresAtMs(
  seenAtMs: number,
  ttlMs: number,
  resumedAtMs?: number,
): number {
  return Math.max(seenAtMs + ttlMs, resumedAtMs === undefined ? -Infinity : resumedAtMs + ttlMs);
}

export interface LivenessTimes {
  /** Per cluster id, when its records were first read (same time base as `asOfMs`). */
  firstSeenMs?: Readonly<Record<string, number>> | undefined;
  /** When reads of the heartbeats resumed after failing; undefined if they never failed. */
  resumedAtMs?: number | undefined;
}

export function applyHeartbeats(
  exports: readonly ClusterExport[],
  sightings: RenewalSightings | undefined,
  asOfMs: number,
  ttlMs: number,
  times: LivenessTimes = {},
): Liveness {
  const { firstSeenMs, resumedAtMs } = times;
  const stale = new Set<string>();
  let nextExpiryMs: number | undefined;
  let nextFirstSeenExpiryMs: number | undefined;
  const out = exports.map((e) => {
    const id = e.cluster.clusterId;
    const beat = lastRenewalSeenMs(sightings, id);
    const last =
      beat ?? (e.hasExportRecord && firstSeenMs !== undefined ? firstSeenMs[id] : undefined);
    if (last === undefined) return e;
    const expires = heartbeatExpiresAtMs(last, ttlMs, resumedAtMs);
    if (expires > asOfMs) {
      nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expires);
      if (beat === undefined)
        nextFirstSeenExpiryMs = Math.min(nextFirstSeenExpiryMs ?? Infinity, expires);
      return e;
    }
    stale.add(id);
    return { ...e, endpoints: [] };
  });
  const result: Liveness = { exports: out, stale: [...stale].sort() };
  if (nextExpiryMs !== undefined) result.nextExpiryMs = nextExpiryMs;
  if (nextFirstSeenExpiryMs !== undefined) result.nextFirstSeenExpiryMs = nextFirstSeenExpiryMs;
  return result;
}

/**
 * Which clusters of one namespace's heartbeats are live as of `asOfMs` (`key`, comparable),
 * and when the next live one would expire (same rules as `applyHeartbeats`). An import
 * depends on heartbeats only through the live set: a renewal that leaves every cluster live,
 * the steady state, changes nothing, so the importer re-runs a namespace's imports only when
 * the key moves (a heartbeat changed it, or an expiry it waits for came), instead of on every
 * renewal and at every service's own expiry (at 1,000 services and 3 clusters: 1,000
 * reconciles every ~10 s, then ~6 a second; most of an idle import agent's CPU).
 */
export function heartbeatLiveness(
  sightings: RenewalSightings | undefined,
  asOfMs: number,
  ttlMs: number,
  resumedAtMs?: number,
): { key: string; nextExpiryMs?: number } {
  let nextExpiryMs: number | undefined;
  const parts: string[] = [];
  for (const [id, { seenAtMs }] of sightings ?? []) {
    const expires = heartbeatExpiresAtMs(seenAtMs, ttlMs, resumedAtMs);
    const live = expires > asOfMs;
    if (live) nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, expires);
    parts.push(`${id}=${live ? 'live' : 'stale'}`);
  }
  const key = parts.sort().join(',');
  return nextExpiryMs === undefined ? { key } : { key, nextExpiryMs };
}
