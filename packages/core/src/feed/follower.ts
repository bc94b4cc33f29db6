import type { Heartbeat } from '../model/index.js';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import {
  planFeed,
  type FeedVoucher,
  type ServiceRef,
  type UnvouchedReason,
  type WriterFollow,
} from '../planning/feed.js';
import { isCloudMapNotFound, type CloudMapPort } from '../ports/cloudmap-port.js';
import { Attr } from '../records/attributes.js';
import {
  decodeFeeds,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  type FeedRecord,
} from '../records/feed.js';
import type { Clock } from '../workqueue/clock.js';

/**
 * Follows the clusterset change feed (ADR 0018) for one reader: the import agent's poller and
 * the export agent's peer watch each run one. Every round checks the feed service's revision
 * (one `DiscoverInstancesRevision`), reads the feed when it moved (one `DiscoverInstances`),
 * and hands back the services to read now, bounded by a budget (planning/feed.ts). The reader
 * also feeds it the heartbeats it reads (`observeHeartbeats`): a writer's feed counts only
 * while its own heartbeat vouches for it, judged on this reader's clock.
 *
 * What the caller does with the answer: read `read` (each a Kubernetes service), read
 * everything when `sweep`, and give every service a per-service revision check unless each of
 * its clusters has been vouched for since that service's last check (`vouchedSince`).
 */
export interface FeedFollower {
  round(): Promise<FeedRound>;
  /** The decoded heartbeats of one namespace, as just read (the whole service). */
  observeHeartbeats(namespace: string, heartbeats: readonly Heartbeat[]): void;
  /** The namespace is no longer read: forget its heartbeats. */
  forgetNamespace(namespace: string): void;
  /**
   * Reader's clock time since when `clusterId`'s feed has been vouched for without a break;
   * undefined while it is not. A service may skip its own check only if it was checked after
   * this time (so a writer that was stale, forged or new gets every service checked once).
   */
  vouchedSince(clusterId: string): number | undefined;
  /** Whether the first read of the feed happened (the baseline every sweep starts after). */
  readonly baselined: boolean;
  /** Writers with a valid record at the last read (vouched or not). */
  readonly writers: ReadonlySet<string>;
  readonly clustersetId: string;
}

export interface FeedRound {
  /** False when a call failed. */
  ok: boolean;
  /** Services to read now (bounded). */
  read: ServiceRef[];
  /** The feed cannot say what changed (a vouched writer's record skipped past this reader). */
  sweep: boolean;
  /**
   * A writer's record moved in a way an honest advance does not (a new epoch, a sequence
   * number going back, a record that appeared after the baseline): the reader should read the
   * heartbeats again now rather than at their period, so a record its writer no longer
   * vouches for (a restart with the feed off, a replayed copy) stops counting within a round
   * or two, and a restarted writer is vouched for again sooner.
   */
  recheckHeartbeats: boolean;
}

export interface FeedFollowerOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstancesRevision' | 'discoverInstances'>;
  clustersetId: string;
  /** The reader's own cluster: its record is skipped (the export agent's own writes). */
  ownClusterId?: string;
  /** A heartbeat whose renewal this reader has not seen change for this long vouches for nothing. */
  heartbeatTtlMs: number;
  clock: Clock;
  logger: Logger;
  isLocalNamespace?: (namespace: string) => boolean;
  metrics?: {
    sweep?(reason: string): void;
    rejected?(): void;
    unvouched?(reason: UnvouchedReason): void;
  };
}

/**
 * Reads handed out per round. At a 1.2 s feed period: 16 reads a round for vouched writers
 * (a burst of new exports is read at ~13 services a second, the listing catches up with
 * anything bigger), 2 for all the others together (a flood of forged names costs under 2
 * `DiscoverInstances` a second).
 */
const FEED_BUDGET = { vouched: 16, unvouched: 2 } as const;

/** Rejected (instance, reason) pairs named in a line of their own and remembered, at most. */
const MAX_REJECTED_REMEMBERED = 256;

interface HeartbeatSeen {
  renewedAtMs: number;
  feed: { epoch: string; seq: number } | undefined;
  renewedSeenAtMs: number;
  observedAtMs: number;
}

export function createFeedFollower(opts: FeedFollowerOptions): FeedFollower {
  const service = feedServiceName(opts.clustersetId);
  let records: FeedRecord[] = [];
  let follows = new Map<string, WriterFollow>();
  let feedRevision: number | undefined;
  let baselined = false;
  /** Heartbeats seen, by cluster id then namespace. */
  const heartbeatsSeen = new Map<string, Map<string, HeartbeatSeen>>();
  const vouchedSince = new Map<string, number>();
  /** The last reason logged per unvouched writer (one line per change). */
  const unvouchedLogged = new Map<string, UnvouchedReason>();
  /** Rejected (instance, reason) pairs of the last read already logged (bounded). */
  let rejectedSeen = new Set<string>();
  /** Each writer's (epoch, seq) at the last read, to tell an honest advance from anything else. */
  let lastSeen = new Map<string, { epoch: string; seq: number }>();
  /** Set by a read whose records moved unlike an honest advance; reported once by the round. */
  let suspicious = false;

  /** Renewal changes are timed on this reader's clock; the writer's own time is only compared with itself. */
  function observe(namespace: string, heartbeats: readonly Heartbeat[]): void {
    const now = opts.clock.now();
    const present = new Set<string>();
    for (const hb of heartbeats) {
      const { clusterId, clustersetId } = hb.cluster;
      if (clustersetId !== opts.clustersetId) continue;
      present.add(clusterId);
      let byNamespace = heartbeatsSeen.get(clusterId);
      if (byNamespace === undefined) heartbeatsSeen.set(clusterId, (byNamespace = new Map()));
      const before = byNamespace.get(namespace);
      const sameFeed =
        before?.feed !== undefined &&
        hb.feed !== undefined &&
        before.feed.epoch === hb.feed.epoch &&
        before.feed.seq === hb.feed.seq;
      byNamespace.set(namespace, {
        renewedAtMs: hb.renewedAtMs,
        feed: hb.feed,
        renewedSeenAtMs:
          before !== undefined && before.renewedAtMs === hb.renewedAtMs
            ? before.renewedSeenAtMs
            : now,
        observedAtMs: sameFeed ? before.observedAtMs : now,
      });
    }
    for (const [clusterId, byNamespace] of heartbeatsSeen) {
      if (present.has(clusterId)) continue;
      byNamespace.delete(namespace);
      if (byNamespace.size === 0) heartbeatsSeen.delete(clusterId);
    }
  }

  /**
   * Each cluster's voucher: its most recently renewed heartbeat, when that states a feed. A
   * writer renews all its heartbeats alike; the freshest one seen says what it does now, so an
   * older one still stating a feed in another namespace vouches for nothing.
   */
  function vouchers(): Map<string, FeedVoucher> {
    const out = new Map<string, FeedVoucher>();
    for (const [clusterId, byNamespace] of heartbeatsSeen) {
      let best: HeartbeatSeen | undefined;
      for (const seen of byNamespace.values())
        if (best === undefined || seen.renewedSeenAtMs > best.renewedSeenAtMs) best = seen;
      if (best?.feed === undefined) continue;
      out.set(clusterId, {
        epoch: best.feed.epoch,
        seq: best.feed.seq,
        renewedSeenAtMs: best.renewedSeenAtMs,
        observedAtMs: best.observedAtMs,
      });
    }
    return out;
  }

  async function round(): Promise<FeedRound> {
    const ok = await refresh();
    const now = opts.clock.now();
    const plan = planFeed(follows, records, vouchers(), {
      nowMs: now,
      ttlMs: opts.heartbeatTtlMs,
      budget: FEED_BUDGET,
      baseline: !baselined,
      ...(opts.isLocalNamespace === undefined ? {} : { isLocalNamespace: opts.isLocalNamespace }),
    });
    if (ok) baselined = true;
    follows = plan.writers;
    for (const clusterId of plan.vouched) {
      if (!vouchedSince.has(clusterId)) vouchedSince.set(clusterId, now);
      if (unvouchedLogged.delete(clusterId))
        opts.logger.info('change feed vouched for again by its heartbeat', {
          [logFields.clusterId]: clusterId,
        });
    }
    for (const clusterId of [...vouchedSince.keys()])
      if (!plan.vouched.has(clusterId)) vouchedSince.delete(clusterId);
    for (const [clusterId, reason] of plan.unvouched) noteUnvouched(clusterId, reason);
    for (const clusterId of [...unvouchedLogged.keys()])
      if (!plan.unvouched.has(clusterId) && !plan.vouched.has(clusterId))
        unvouchedLogged.delete(clusterId);
    if (plan.gaps.length > 0) {
      opts.metrics?.sweep?.('gap');
      opts.logger.info('change feed skipped past what this reader saw; reading everything', {
        clusters: plan.gaps,
      });
    }
    const recheckHeartbeats = suspicious;
    suspicious = false;
    return { ok, read: plan.services, sweep: plan.gaps.length > 0, recheckHeartbeats };
  }

  function noteUnvouched(clusterId: string, reason: UnvouchedReason): void {
    opts.metrics?.unvouched?.(reason);
    if (unvouchedLogged.get(clusterId) === reason) return;
    unvouchedLogged.set(clusterId, reason);
    // Normal for a moment after a writer starts (its heartbeat is read every 30 s); anything
    // lasting means a stale or forged record: its services keep their own checks meanwhile.
    opts.logger.info(
      'change feed record not vouched for by its heartbeat; checking its services one by one',
      {
        [logFields.clusterId]: clusterId,
        reason,
      },
    );
  }

  /** Checks the feed's revision and reads the feed when it moved; false when a call failed. */
  async function refresh(): Promise<boolean> {
    const { cloudMap, clustersetId } = opts;
    try {
      const revision = await cloudMap.discoverInstancesRevision(FEED_NAMESPACE_NAME, service);
      if (revision === feedRevision) return true;
      const read = await cloudMap.discoverInstances(FEED_NAMESPACE_NAME, service, {
        [Attr.ClustersetId]: clustersetId,
      });
      // The revision that came with the data, not the one checked: a read that lags the check
      // must not hide what it did not show yet.
      const moved = read.revision !== feedRevision;
      feedRevision = read.revision;
      const { feeds, rejected } = decodeFeeds(read.instances, { clustersetId });
      noteRejected(rejected);
      records = feeds.filter((r) => r.cluster.clusterId !== opts.ownClusterId);
      noteMoves(feeds, moved);
      return true;
    } catch (error) {
      if (isCloudMapNotFound(error)) {
        // No feed (never written, or deleted): nothing is vouched for, every service is checked.
        records = [];
        feedRevision = undefined;
        lastSeen = new Map();
        return true;
      }
      opts.logger.debug('change feed read failed', { [logFields.error]: error });
      return false;
    }
  }

  /**
   * Whether any writer's record moved unlike an honest advance since the last read. `feeds` are
   * every valid record, the reader's own included (its own writes move the revision too). An
   * honest writer raises its sequence number with every write, so a revision that moved while
   * no record did means a record was removed and put back, or re-registered as it was: a
   * replayed copy, or a record its writer no longer writes (ADR 0018 decision 12).
   */
  function noteMoves(feeds: readonly FeedRecord[], moved: boolean): void {
    const next = new Map<string, { epoch: string; seq: number }>();
    let changed = feeds.length !== lastSeen.size;
    for (const r of feeds) {
      const before = lastSeen.get(r.cluster.clusterId);
      const honest = before !== undefined && before.epoch === r.epoch && r.seq >= before.seq;
      if (baselined && !honest) suspicious = true;
      if (before?.epoch !== r.epoch || before.seq !== r.seq) changed = true;
      next.set(r.cluster.clusterId, { epoch: r.epoch, seq: r.seq });
    }
    if (baselined && moved && !changed && feeds.length > 0) suspicious = true;
    lastSeen = next;
  }

  /**
   * Hostile or newer-schema data: logged once per instance and reason, then ignored (counted
   * every read). What is remembered is pruned to the instances rejected now and capped, so a
   * flood of bad instances costs at most `MAX_REJECTED_REMEMBERED` lines once and one summary
   * line per read, never a line per instance per read.
   */
  function noteRejected(rejected: readonly { instanceId: string; reason: string }[]): void {
    const keyOf = (r: { instanceId: string; reason: string }): string =>
      `${r.instanceId}\u0000${r.reason}`;
    // Those already logged first (at most the cap, as the last read kept), then new ones.
    const remembered = new Set(rejected.map(keyOf).filter((k) => rejectedSeen.has(k)));
    let unnamed = 0;
    for (const r of rejected) {
      opts.metrics?.rejected?.();
      const key = keyOf(r);
      if (remembered.has(key)) continue;
      if (remembered.size >= MAX_REJECTED_REMEMBERED) {
        unnamed++;
        continue;
      }
      remembered.add(key);
      opts.logger.warn('change feed instance ignored', {
        instanceId: r.instanceId,
        reason: r.reason,
      });
    }
    rejectedSeen = remembered;
    if (unnamed > 0)
      opts.logger.warn('change feed instances ignored (too many to name)', { count: unnamed });
  }

  return {
    round,
    observeHeartbeats: observe,
    // No heartbeat present: the namespace is dropped from every cluster.
    forgetNamespace: (namespace) => observe(namespace, []),
    vouchedSince: (clusterId) => vouchedSince.get(clusterId),
    get baselined() {
      return baselined;
    },
    get writers() {
      return new Set(records.map((r) => r.cluster.clusterId));
    },
    clustersetId: opts.clustersetId,
  };
}
