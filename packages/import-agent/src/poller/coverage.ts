import { Attr, HEARTBEAT_SERVICE_NAME, type FeedFollower } from '@cloudmap-mcs/core';
import type { ServiceReads } from './reads.js';
import type { ServiceSnapshot } from './snapshot.js';
import { keyOf } from './state.js';

// Which services the change feed covers (ADR 0018): those need no revision check of their own.

/**
 * A heartbeat service is read, not revision-checked first: every exporting cluster renews its
 * record each heartbeat period (30 s by default, the same as the check's), so its revision has
 * almost always moved since the last check, and a check would cost a second call for the read
 * that follows. One read is never more calls than a check, and the records are small (one per
 * exporting cluster).
 */
export function isHeartbeat(s: ServiceSnapshot): boolean {
  return s.name === HEARTBEAT_SERVICE_NAME;
}

/**
 * Whether the feed vouches for `s`, so it needs no revision check of its own: its last read
 * succeeded, and each of its clusters' feed records has been vouched for by that cluster's
 * heartbeat since before `s` was last checked (a writer that was stale, forged or new gets
 * every service checked once first). Never heartbeat services.
 */
export function coveredByFeed(
  feed: FeedFollower | undefined,
  reads: ServiceReads,
  s: ServiceSnapshot,
  /** `everyWriterVouched` of the same snapshot, computed once per round by the caller. */
  allVouched: boolean,
): boolean {
  if (feed === undefined || !allVouched || isHeartbeat(s)) return false;
  if (s.error !== undefined || s.fetchedAtMs === undefined || s.instances.length === 0)
    return false;
  const checkedAt = reads.checkedAt(keyOf(s.namespace, s.name)) ?? -Infinity;
  return s.instances.every((i) => {
    const since = feed.vouchedSince(i.attributes[Attr.ClusterId] ?? '');
    return since !== undefined && checkedAt >= since;
  });
}

/**
 * Whether every cluster with records in `services` has a feed its heartbeat vouches for. While
 * one has not (the AWS controller during a migration, a writer with the feed off or stale),
 * no service counts as covered: such a writer can add records to any service, including one
 * the feed covers, and nothing would announce them before the next listing (a minute). It
 * costs the per-service checks the agents made before the feed, and only while such a writer
 * has records anywhere; what it first writes while it has none is found by the listing.
 */
export function everyWriterVouched(
  feed: FeedFollower | undefined,
  services: Iterable<ServiceSnapshot>,
): boolean {
  if (feed === undefined) return false;
  for (const s of services) {
    if (isHeartbeat(s)) continue;
    for (const i of s.instances)
      if (feed.vouchedSince(i.attributes[Attr.ClusterId] ?? '') === undefined) return false;
  }
  return true;
}
