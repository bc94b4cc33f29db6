import type { FeedEntry, FeedRecord } from '../records/feed.js';

/**
 * What a reader does with the change feed (ADR 0018). Pure: the feed follower
 * (cloudmap/feed-follower.ts) keeps one `WriterFollow` per writing cluster and asks, after
 * each read of the feed service and at every round, which services to read now and which
 * writers the feed may vouch for.
 *
 * The feed is an accelerator, never a source of truth:
 *
 * - A writer's record is *vouched* only while that writer's own heartbeat says so: the
 *   heartbeat names the same epoch and the sequence number the writer had written when it
 *   renewed, the record does not run more than `FEED_SEQ_SLACK` past it (nor stay behind it
 *   once the reader has seen the heartbeat for a while), and this reader saw the heartbeat's
 *   renewal change within the TTL, on its own clock. Only a vouched writer's services may skip
 *   their per-service revision checks (`covers` in the follower).
 * - What a record names is read by exact entry (`ns/name:seq`), not by comparing sequence
 *   numbers with a cursor: a record pushed ahead (a forged `FEED_SEQ`) cannot make a later
 *   real entry look old, and a record replaced by an older copy re-reads nothing. The set of
 *   entries already handed out is pruned to the entries of the writer's current record, so
 *   memory is bounded by the record's size.
 * - Reads are bounded per round (`budget`): vouched writers first, the rest (writers without a
 *   heartbeat, a feed running ahead of its heartbeat) share a small budget, so a flood of
 *   names costs a few reads a second and never delays anything else.
 */

/** What a cluster's heartbeat states about its feed, as this reader saw it. */
export interface FeedVoucher {
  epoch: string;
  /** The feed sequence number the writer had written when it renewed the heartbeat. */
  seq: number;
  /** Reader's clock: when the heartbeat's renewal was last seen to change (first sight counts). */
  renewedSeenAtMs: number;
  /** Reader's clock: when this heartbeat value was first read. */
  observedAtMs: number;
}

/**
 * How far a vouched record may run ahead of the sequence number its heartbeat states. The
 * writer writes its feed at most once a second and renews its heartbeat every 30 s by default
 * (and at most a TTL, 120 s, late before the heartbeat no longer counts): 256 is well above
 * what an honest writer reaches.
 */
export const FEED_SEQ_SLACK = 256;

/**
 * How long a record may stay behind the sequence number its heartbeat states once the reader
 * saw that heartbeat: the writer renews only after the record was written, so a fresh read
 * shows it; Cloud Map's reads are eventually consistent for a moment.
 */
export const FEED_LAG_GRACE_MS = 5000;

/** Why a writer's record is not vouched (logged once per change, counted). */
export type UnvouchedReason =
  'no-heartbeat' | 'heartbeat-expired' | 'epoch-mismatch' | 'seq-ahead' | 'seq-behind';

/** Whether `voucher` vouches for `record` now; the reason when it does not. */
export function vouchFor(
  record: FeedRecord,
  voucher: FeedVoucher | undefined,
  nowMs: number,
  ttlMs: number,
): UnvouchedReason | undefined {
  if (voucher === undefined) return 'no-heartbeat';
  if (nowMs - voucher.renewedSeenAtMs > ttlMs) return 'heartbeat-expired';
  if (voucher.epoch !== record.epoch) return 'epoch-mismatch';
  if (record.seq > voucher.seq + FEED_SEQ_SLACK) return 'seq-ahead';
  if (record.seq < voucher.seq && nowMs - voucher.observedAtMs > FEED_LAG_GRACE_MS)
    return 'seq-behind';
  return undefined;
}

/** How far a reader has followed one writer's feed. */
export interface WriterFollow {
  epoch: string;
  /** Highest sequence number of a vouched record read in this epoch (gap detection). */
  seenSeq: number;
  /** Entries (`ns/name:seq`) of the writer's current record already handed out. */
  handedOut: Set<string>;
}

export interface ServiceRef {
  namespace: string;
  name: string;
}

export interface FeedPlanOptions {
  nowMs: number;
  ttlMs: number;
  /** At most this many reads in one plan for vouched writers, and for all the others. */
  budget: { vouched: number; unvouched: number };
  /** Only services in these namespaces are read (the others are not imported here). */
  isLocalNamespace?: (namespace: string) => boolean;
  /** The reader's very first read of the feed: adopt every record, read nothing. */
  baseline: boolean;
}

export interface FeedPlan {
  /** Services to read now (each once), vouched writers' first, newest first. */
  services: ServiceRef[];
  /** Writers whose record is vouched now. */
  vouched: Set<string>;
  /** Writers whose record is not vouched, and why. */
  unvouched: Map<string, UnvouchedReason>;
  /**
   * Vouched writers whose record skipped past what this reader saw (`floor` above the last
   * sequence number read): changes fell out of the record unread, so read everything.
   */
  gaps: string[];
  /** Entries waiting for budget (read in later rounds). */
  backlog: number;
  /** The follow state after this plan, by cluster id (writers without a record are gone). */
  writers: Map<string, WriterFollow>;
}

const entryKey = (e: FeedEntry): string => `${e.namespace}/${e.name}:${String(e.seq)}`;

/**
 * One round of the feed: the writers' current records (`records`, one per cluster, already
 * validated by the codec), what their heartbeats state (`vouchers`), and the follow state.
 */
export function planFeed(
  follows: ReadonlyMap<string, WriterFollow>,
  records: readonly FeedRecord[],
  vouchers: ReadonlyMap<string, FeedVoucher>,
  opts: FeedPlanOptions,
): FeedPlan {
  const writers = new Map<string, WriterFollow>();
  const vouched = new Set<string>();
  const unvouched = new Map<string, UnvouchedReason>();
  const gaps: string[] = [];
  const waiting: { entry: FeedEntry; follow: WriterFollow; vouched: boolean }[] = [];
  const local = opts.isLocalNamespace ?? ((): boolean => true);
  for (const record of records) {
    const { clusterId } = record.cluster;
    const reason = vouchFor(record, vouchers.get(clusterId), opts.nowMs, opts.ttlMs);
    if (reason === undefined) vouched.add(clusterId);
    else unvouched.set(clusterId, reason);
    const previous = follows.get(clusterId);
    const follow: WriterFollow =
      previous !== undefined && previous.epoch === record.epoch
        ? { ...previous, handedOut: new Set<string>() }
        : { epoch: record.epoch, seenSeq: record.seq, handedOut: new Set<string>() };
    const sameEpoch = previous !== undefined && previous.epoch === record.epoch;
    if (reason === undefined && sameEpoch) {
      // Only a vouched record moves what this reader believes it saw: a forged sequence
      // number beyond the heartbeat's never does, so it cannot hide a later gap.
      if (record.floor > previous.seenSeq) gaps.push(clusterId);
      follow.seenSeq = record.seq;
    }
    for (const entry of record.changes) {
      const key = entryKey(entry);
      // Pruned to the current record: an entry that comes back after a forged or stale
      // record replaced it is read again (a read, never a missed change).
      if (opts.baseline || previous?.handedOut.has(key) === true || !local(entry.namespace)) {
        follow.handedOut.add(key);
        continue;
      }
      waiting.push({ entry, follow, vouched: reason === undefined });
    }
    writers.set(clusterId, follow);
  }
  const services: ServiceRef[] = [];
  const named = new Set<string>();
  let backlog = 0;
  const budget = { ...opts.budget };
  const order = [...waiting].sort(
    (a, b) => Number(b.vouched) - Number(a.vouched) || b.entry.seq - a.entry.seq,
  );
  for (const { entry, follow, vouched: v } of order) {
    const key = `${entry.namespace}/${entry.name}`;
    if (named.has(key)) {
      follow.handedOut.add(entryKey(entry));
      continue;
    }
    const kind = v ? 'vouched' : 'unvouched';
    if (budget[kind] <= 0) {
      backlog++;
      continue;
    }
    budget[kind]--;
    named.add(key);
    follow.handedOut.add(entryKey(entry));
    services.push({ namespace: entry.namespace, name: entry.name });
  }
  return { services, vouched, unvouched, gaps, backlog, writers };
}
