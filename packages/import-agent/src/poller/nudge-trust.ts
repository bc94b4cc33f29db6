import type { FeedRecord, Nudge } from '@cloudmap-mcs/core';

/**
 * Whether this importer may poll the change feed slowly because writers nudge it (ADR 0018
 * decision 11). Pure bookkeeping on the times it is given: the poller (nudges.ts) feeds it
 * the nudges that arrive and every feed read, and asks it for the period to use.
 *
 * Trusted while all hold:
 * - its own nudge address has been in its own cluster's feed record for `settleMs` without a
 *   break (every writer refreshes its target list within 30 s of a write, so by then every
 *   writer knows where to send);
 * - every writer's record says it nudges (`FEED_NUDGE` present; an older writer or a
 *   writer with nudges off never does);
 * - no miss within the current penalty. A miss: once settled, a read shows a nudging writer
 *   at a higher sequence number than the read before, and no nudge of that number (or a later
 *   one) from it arrived within `missWindowMs` of that read. Before settling, writers may not
 *   know the address yet: their writes without a nudge are expected, not misses. The penalty
 *   is `firstDistrustMs` for a miss long after the last one (a nudge lost in a busy moment)
 *   and doubles, up to `distrustMs`, for each miss within twice the penalty of the one
 *   before (a network that drops nudges).
 */
export interface NudgeTrustOptions {
  localClusterId: string;
  /** This agent's address as published (`host:port`); undefined: it takes no nudges. */
  ownAddress: string | undefined;
  settleMs: number;
  missWindowMs?: number;
  /** The penalty of an isolated miss. */
  firstDistrustMs?: number;
  /** The longest penalty, reached by repeated misses. */
  distrustMs?: number;
}

interface Position {
  epoch: string;
  seq: number;
}

interface Expected extends Position {
  clusterId: string;
  deadlineMs: number;
}

export interface NudgeTrust {
  /** A nudge arrived (already validated). */
  nudged(nudge: Nudge, nowMs: number): void;
  /** The feed was read: every valid writer record (empty when there is no feed). */
  observed(records: readonly FeedRecord[], nowMs: number): void;
  /** Expectations whose window closed without their nudge: the misses found now. */
  expire(nowMs: number): number;
  /** How long the last miss distrusts nudges (0 before any miss). */
  penaltyMs(): number;
  trusted(nowMs: number): boolean;
  /** Whether the last read shows the nudge's writer at its epoch and at least its number. */
  shows(nudge: Nudge): boolean;
}

export function createNudgeTrust(opts: NudgeTrustOptions): NudgeTrust {
  const missWindowMs = opts.missWindowMs ?? 2_000;
  const distrustMs = opts.distrustMs ?? 600_000;
  const firstDistrustMs = Math.min(opts.firstDistrustMs ?? 60_000, distrustMs);
  let penaltyMs = 0;
  const nudgedAt = new Map<string, Position>();
  const seen = new Map<string, Position>();
  let expected: Expected[] = [];
  let ownSinceMs: number | undefined;
  let allNudge = false;
  let lastMissMs = -Infinity;

  const covered = (clusterId: string, p: Position): boolean => {
    const n = nudgedAt.get(clusterId);
    return n !== undefined && n.epoch === p.epoch && n.seq >= p.seq;
  };

  return {
    nudged(nudge) {
      // Only writers the feed shows: anyone can send a nudge, and one per made-up cluster id
      // must not grow this map. A writer's first write is expected by nobody (see observed).
      if (!seen.has(nudge.clusterId)) return;
      const prev = nudgedAt.get(nudge.clusterId);
      if (prev === undefined || prev.epoch !== nudge.epoch || prev.seq < nudge.seq)
        nudgedAt.set(nudge.clusterId, { epoch: nudge.epoch, seq: nudge.seq });
      expected = expected.filter((e) => !covered(e.clusterId, e));
    },
    observed(records, nowMs) {
      const settled = ownSinceMs !== undefined && nowMs - ownSinceMs >= opts.settleMs;
      const writers = new Set<string>();
      for (const r of records) {
        const id = r.cluster.clusterId;
        writers.add(id);
        const before = seen.get(id);
        // Only an advance seen between two reads of one epoch is expected to be nudged: a
        // new writer or a new epoch is a restart, which the feed handles with a sweep.
        const advanced = before !== undefined && before.epoch === r.epoch && r.seq > before.seq;
        const position = { epoch: r.epoch, seq: r.seq };
        if (settled && r.nudge !== undefined && advanced && !covered(id, position))
          expected.push({ clusterId: id, ...position, deadlineMs: nowMs + missWindowMs });
        seen.set(id, position);
      }
      for (const id of [...seen.keys()])
        if (!writers.has(id)) {
          seen.delete(id);
          nudgedAt.delete(id);
        }
      expected = expected.filter((e) => writers.has(e.clusterId));
      allNudge = records.length > 0 && records.every((r) => r.nudge !== undefined);
      const own = records.find((r) => r.cluster.clusterId === opts.localClusterId);
      const listed = opts.ownAddress !== undefined && own?.nudge === opts.ownAddress;
      ownSinceMs = listed ? (ownSinceMs ?? nowMs) : undefined;
    },
    expire(nowMs) {
      const missed = expected.filter((e) => e.deadlineMs <= nowMs);
      if (missed.length === 0) return 0;
      expected = expected.filter((e) => e.deadlineMs > nowMs);
      penaltyMs =
        penaltyMs > 0 && nowMs - lastMissMs < 2 * penaltyMs
          ? Math.min(distrustMs, 2 * penaltyMs)
          : firstDistrustMs;
      lastMissMs = nowMs;
      return missed.length;
    },
    penaltyMs: () => penaltyMs,
    trusted(nowMs) {
      return (
        allNudge &&
        ownSinceMs !== undefined &&
        nowMs - ownSinceMs >= opts.settleMs &&
        nowMs - lastMissMs >= penaltyMs
      );
    },
    shows(nudge) {
      const s = seen.get(nudge.clusterId);
      return s !== undefined && s.epoch === nudge.epoch && s.seq >= nudge.seq;
    },
  };
}
