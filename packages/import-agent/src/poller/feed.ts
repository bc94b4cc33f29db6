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

export function createFeedFollower(opts: FeedFollowerOptions): FeedFollower {
  const { state, reads } = opts;
  const { port, log } = state;
  const { clustersetId } = state.opts;
  const service = feedServiceName(clustersetId);
  let cursors = new Map<string, FeedCursor>();
  let baselined = false;
  let revision: number | undefined;
  /** Clusters with a valid feed record at the last read; empty while there is no feed. */
  let writers = new Set<string>();
  const rejectedSeen = new Set<string>();

  const sweep = (reason: string, detail: Record<string, unknown> = {}): void => {
    state.opts.metrics?.feedSweep?.(reason);
    log.info('change feed cannot say what changed; sweeping', { reason, ...detail });
    opts.sweep();
  };

  /** The feed is not there (never written, or deleted): nothing is covered any more. */
  const feedMissing = (): void => {
    const had = writers.size > 0;
    writers = new Set();
    cursors = new Map();
    revision = undefined;
    if (had) sweep('feed-gone');
    baselined = true;
  };

  /** Reads the feed and what it names; false when a call failed. */
  const readFeed = async (): Promise<boolean> => {
    let instances;
    try {
      const read = await port.discoverInstances(FEED_NAMESPACE_NAME, service, {
        [Attr.ClustersetId]: clustersetId,
      });
      state.callSucceeded();
      instances = read.instances;
      // The revision that comes with the data read, not the one checked before: a read that
      // lags the check must not hide what it did not show yet.
      revision = read.revision;
    } catch (error) {
      if (gone(error)) {
        state.callSucceeded();
        feedMissing();
        return true;
      }
      state.readError('discoverInstances');
      log.warn('reading the change feed failed', { [logFields.error]: describe(error) });
      return false;
    }
    const { feeds, rejected } = decodeFeeds(instances, { clustersetId });
    for (const r of rejected) {
      // Hostile or newer-schema data: logged once per instance and reason, then ignored.
      state.opts.metrics?.feedRejected?.();
      const key = `${r.instanceId}\u0000${r.reason}`;
      if (rejectedSeen.has(key)) continue;
      rejectedSeen.add(key);
      log.warn('change feed instance ignored', { instanceId: r.instanceId, reason: r.reason });
    }
    const plan = planFeedRead(cursors, feeds, baselined);
    cursors = plan.cursors;
    writers = new Set(feeds.map((f) => f.cluster.clusterId));
    const first = !baselined;
    baselined = true;
    if (plan.sweep.length > 0) sweep('feed', { clusters: plan.sweep });
    if (first || plan.sweep.length > 0) return true;
    const named = plan.services.filter((s) => state.opts.isLocalNamespace(s.namespace));
    let ok = true;
    await inPool(named, state.concurrency, async (s) => {
      if (!(await reads.readNamed(s.namespace, s.name))) ok = false;
    });
    return ok;
  };

  return {
    get baselined() {
      return baselined;
    },
    async round() {
      let current: number;
      try {
        current = await port.discoverInstancesRevision(FEED_NAMESPACE_NAME, service);
        state.callSucceeded();
      } catch (error) {
        if (gone(error)) {
          state.callSucceeded();
          if (revision !== undefined || writers.size > 0 || !baselined) feedMissing();
          return true;
        }
        state.readError('discoverInstancesRevision');
        log.debug('change feed revision check failed', { [logFields.error]: describe(error) });
        return false;
      }
      if (current === revision) return true;
      // A service whose read fails here is marked failing, so its own revision check retries
      // it (covers() is false for it) without re-reading the feed every round.
      return readFeed();
    },
    covers(s) {
      if (writers.size === 0 || s.error !== undefined || s.fetchedAtMs === undefined) return false;
      if (s.instances.length === 0) return false;
      return s.instances.every((i) => writers.has(i.attributes[Attr.ClusterId] ?? ''));
    },
  };
}
