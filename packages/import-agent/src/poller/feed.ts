import {
  Attr,
  decodeFeeds,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  logFields,
  planFeedRead,
  type FeedCursor,
} from '@cloudmap-mcs/core';
import type { ServiceSnapshot } from './snapshot.js';
import type { ServiceReads } from './reads.js';
import { describe, inPool, type PollerState } from './state.js';

/**
 * The reader side of the clusterset change feed (ADR 0018). Each fast round checks one
 * revision, the feed service's; when it moved, the feed is read and `planFeedRead` says
 * which services to read (just those) or that a sweep is needed (a new writer, a new epoch, a
 * gap, a writer gone, the feed itself gone). The feed only says where to look: what is
 * imported always comes from reading the services, and anything the feed cannot vouch for
 * (instances of clusters that do not write it, services whose last read failed) keeps its
 * per-service revision check (poller.ts), so a missing, stale or hostile feed costs latency,
 * never correctness.
 */
export interface FeedFollower {
  /** Checks the feed's revision and follows it; false when a call failed. */
  round(): Promise<boolean>;
  /** Whether the feed vouches for `s`: every instance is of a cluster that writes the feed. */
  covers(s: ServiceSnapshot): boolean;
  /** Whether the first read of the feed happened (the baseline a full sweep starts after). */
  readonly baselined: boolean;
}

export interface FeedFollowerOptions {
  state: PollerState;
  reads: ServiceReads;
  /** Read everything (listing + every service): the feed cannot say what changed. */
  sweep: () => void;
}

const gone = (error: unknown): boolean =>
  isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound');

/** The follower's state between rounds. */
interface FeedState {
  readonly opts: FeedFollowerOptions;
  /** The feed service's name for this clusterset. */
  readonly service: string;
  cursors: Map<string, FeedCursor>;
  baselined: boolean;
  revision: number | undefined;
  /** Clusters with a valid feed record at the last read; empty while there is no feed. */
  writers: Set<string>;
  /** Rejected instances already logged (instance id and reason). */
  readonly rejectedSeen: Set<string>;
}

export function createFeedFollower(opts: FeedFollowerOptions): FeedFollower {
  const feed: FeedState = {
    opts,
    service: feedServiceName(opts.state.opts.clustersetId),
    cursors: new Map(),
    baselined: false,
    revision: undefined,
    writers: new Set(),
    rejectedSeen: new Set(),
  };
  return {
    get baselined() {
      return feed.baselined;
    },
    round: () => followRound(feed),
    covers: (s) => covers(feed, s),
  };
}

function sweep(feed: FeedState, reason: string, detail: Record<string, unknown> = {}): void {
  const { state } = feed.opts;
  state.opts.metrics?.feedSweep?.(reason);
  state.log.info('change feed cannot say what changed; sweeping', { reason, ...detail });
  feed.opts.sweep();
}

/** The feed is not there (never written, or deleted): nothing is covered any more. */
function feedMissing(feed: FeedState): void {
  const had = feed.writers.size > 0;
  feed.writers = new Set();
  feed.cursors = new Map();
  feed.revision = undefined;
  if (had) sweep(feed, 'feed-gone');
  feed.baselined = true;
}

/** Checks the feed's revision and reads the feed when it moved. */
async function followRound(feed: FeedState): Promise<boolean> {
  const { state } = feed.opts;
  let current: number;
  try {
    current = await state.port.discoverInstancesRevision(FEED_NAMESPACE_NAME, feed.service);
    state.callSucceeded();
  } catch (error) {
    if (gone(error)) {
      state.callSucceeded();
      if (feed.revision !== undefined || feed.writers.size > 0 || !feed.baselined)
        feedMissing(feed);
      return true;
    }
    state.readError('discoverInstancesRevision');
    state.log.debug('change feed revision check failed', { [logFields.error]: describe(error) });
    return false;
  }
  if (current === feed.revision) return true;
  // A service whose read fails here is marked failing, so its own revision check retries
  // it (covers() is false for it) without re-reading the feed every round.
  return readFeed(feed);
}

/** Reads the feed and what it names; false when a call failed. */
async function readFeed(feed: FeedState): Promise<boolean> {
  const { state, reads } = feed.opts;
  const { clustersetId } = state.opts;
  let instances;
  try {
    const read = await state.port.discoverInstances(FEED_NAMESPACE_NAME, feed.service, {
      [Attr.ClustersetId]: clustersetId,
    });
    state.callSucceeded();
    instances = read.instances;
    // The revision that comes with the data read, not the one checked before: a read that
    // lags the check must not hide what it did not show yet.
    feed.revision = read.revision;
  } catch (error) {
    if (gone(error)) {
      state.callSucceeded();
      feedMissing(feed);
      return true;
    }
    state.readError('discoverInstances');
    state.log.warn('reading the change feed failed', { [logFields.error]: describe(error) });
    return false;
  }
  const { feeds, rejected } = decodeFeeds(instances, { clustersetId });
  noteRejected(feed, rejected);
  const plan = planFeedRead(feed.cursors, feeds, feed.baselined);
  feed.cursors = plan.cursors;
  feed.writers = new Set(feeds.map((f) => f.cluster.clusterId));
  const first = !feed.baselined;
  feed.baselined = true;
  if (plan.sweep.length > 0) sweep(feed, 'feed', { clusters: plan.sweep });
  if (first || plan.sweep.length > 0) return true;
  const named = plan.services.filter((s) => state.opts.isLocalNamespace(s.namespace));
  let ok = true;
  await inPool(named, state.concurrency, async (s) => {
    if (!(await reads.readNamed(s.namespace, s.name))) ok = false;
  });
  return ok;
}

/** Hostile or newer-schema data: logged once per instance and reason, then ignored. */
function noteRejected(
  feed: FeedState,
  rejected: readonly { instanceId: string; reason: string }[],
): void {
  const { state } = feed.opts;
  for (const r of rejected) {
    state.opts.metrics?.feedRejected?.();
    const key = `${r.instanceId}\u0000${r.reason}`;
    if (feed.rejectedSeen.has(key)) continue;
    feed.rejectedSeen.add(key);
    state.log.warn('change feed instance ignored', { instanceId: r.instanceId, reason: r.reason });
  }
}

function covers(feed: FeedState, s: ServiceSnapshot): boolean {
  const { writers } = feed;
  if (writers.size === 0 || s.error !== undefined || s.fetchedAtMs === undefined) return false;
  if (s.instances.length === 0) return false;
  return s.instances.every((i) => writers.has(i.attributes[Attr.ClusterId] ?? ''));
}
