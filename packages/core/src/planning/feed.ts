import type { FeedRecord } from '../records/feed.js';

/**
 * What a reader does with the change feed (ADR 0018). Pure: the poller keeps one cursor per
 * writing cluster and asks, for each read of the feed service, which services to read. Safe
 * under lost, duplicated and reordered feed writes: a record older than the cursor changes
 * nothing, a repeated one reads nothing, and whatever cannot be proven complete (a new writer,
 * a new epoch, changes dropped beyond the floor, a writer gone) asks for a full sweep.
 */

/** How far a reader has followed one cluster's feed. */
export interface FeedCursor {
  epoch: string;
  seq: number;
}

export type SweepReason = 'new-writer' | 'new-epoch' | 'gap' | 'writer-gone';

export interface ServiceRef {
  namespace: string;
  name: string;
}

export interface FeedReadPlan {
  /** Services to read now (each once), in feed order. */
  services: ServiceRef[];
  /** Non-empty when the feed cannot say what changed: read everything. */
  sweep: { clusterId: string; reason: SweepReason }[];
  /** The cursors after this read, by cluster id. */
  cursors: Map<string, FeedCursor>;
}

/**
 * One cluster's record against the reader's cursor. `known` is false for the reader's very
 * first read of the feed, the baseline: its full sweep starts after it and reads everything
 * anyway, so the record is adopted and nothing read.
 */
export function planClusterFeed(
  cursor: FeedCursor | undefined,
  record: FeedRecord,
  known: boolean,
): { cursor: FeedCursor; services: ServiceRef[]; sweep?: SweepReason } {
  const next = { epoch: record.epoch, seq: record.seq };
  if (!known) return { cursor: next, services: [] };
  if (cursor === undefined) return { cursor: next, services: [], sweep: 'new-writer' };
  if (cursor.epoch !== record.epoch) return { cursor: next, services: [], sweep: 'new-epoch' };
  // An older or the same record (a stale replica, a duplicate): nothing new, and the cursor
  // never moves back, so a reordered read cannot make the reader skip a change later.
  if (record.seq <= cursor.seq) return { cursor, services: [] };
  if (record.floor > cursor.seq) return { cursor: next, services: [], sweep: 'gap' };
  const services = record.changes
    .filter((e) => e.seq > cursor.seq)
    .map(({ namespace, name }) => ({ namespace, name }));
  return { cursor: next, services };
}

/**
 * Every cluster's record in one read of the feed service. `baseline`: an earlier read set the
 * cursors (see `planClusterFeed`), so new writers and vanished ones must be swept for.
 */
export function planFeedRead(
  cursors: ReadonlyMap<string, FeedCursor>,
  records: readonly FeedRecord[],
  baseline: boolean,
): FeedReadPlan {
  const next = new Map<string, FeedCursor>();
  const sweep: FeedReadPlan['sweep'] = [];
  const seen = new Set<string>();
  const services: ServiceRef[] = [];
  for (const record of records) {
    const { clusterId } = record.cluster;
    const planned = planClusterFeed(cursors.get(clusterId), record, baseline);
    next.set(clusterId, planned.cursor);
    if (planned.sweep !== undefined) sweep.push({ clusterId, reason: planned.sweep });
    for (const s of planned.services) {
      const key = `${s.namespace}/${s.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      services.push(s);
    }
  }
  for (const clusterId of cursors.keys()) {
    if (!next.has(clusterId) && baseline) sweep.push({ clusterId, reason: 'writer-gone' });
  }
  return { services, sweep, cursors: next };
}
