import {
  createFeedFollower,
  decodeHeartbeats,
  HEARTBEAT_SERVICE_NAME,
  inPool,
  isCloudMapNotFound,
  listServicesPages,
  logFields,
  type FeedFollower,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import type { PeerWatchOptions, WatchedService } from './peer-watch.js';

/** One watched key. */
export interface PeerEntry {
  service: WatchedService;
  /** Highest revision seen (by the reconcile or by this watch); undefined before the first. */
  revision: number | undefined;
  others: readonly string[];
  /** ListServices' InstanceCount at the last count check. */
  count?: number;
  /** Clock time of the last read (the reconcile's) or revision check of its service. */
  checkedAtMs?: number;
}

/** The peer watch's state (peer-watch.ts): the watched keys, the feed's cursors, the timer. */
export interface PeerState {
  readonly opts: PeerWatchOptions;
  readonly entries: Map<string, PeerEntry>;
  timer: TimerHandle | undefined;
  round: Promise<void>;
  running: boolean;
  /** Whether the last round had a failed call (one log line per outage). */
  failing: boolean;
  rounds: number;
  /** Rounds since the last count check, and the ListServices pages that one took. */
  sinceCount: number;
  countCalls: number;
  /** The change feed's follower (core), once this cluster's identity is known. */
  feed: FeedFollower | undefined;
  /** When each watched namespace's heartbeats were last read (they vouch for feed records). */
  readonly heartbeatsReadAt: Map<string, number>;
  /** The feed asked for the heartbeats to be read again sooner than their period. */
  heartbeatsRecheck: boolean;
}

export function createPeerState(opts: PeerWatchOptions): PeerState {
  return {
    opts,
    entries: new Map(),
    timer: undefined,
    round: Promise.resolve(),
    running: false,
    failing: false,
    rounds: 0,
    sinceCount: 0,
    countCalls: 0,
    feed: undefined,
    heartbeatsReadAt: new Map(),
    heartbeatsRecheck: false,
  };
}

/**
 * Whether the feed cannot vouch for `e`: no feed, or another cluster whose feed record has not
 * been vouched for by its heartbeat since `e` was last checked.
 */
export function foreign(s: PeerState, e: PeerEntry): boolean {
  const feed = s.feed;
  if (feed === undefined || feed.writers.size === 0) return true;
  const checkedAt = e.checkedAtMs ?? -Infinity;
  return e.others.some((c) => {
    const since = feed.vouchedSince(c);
    return since === undefined || checkedAt < since;
  });
}

/** Requeues a watched key; its service's cached reads go first, so the reconcile sees news. */
function changed(s: PeerState, key: string): void {
  const entry = s.entries.get(key);
  if (entry === undefined) return;
  s.opts.forget?.(entry.service.namespaceName, entry.service.serviceName);
  s.opts.onChange(key);
}

/** One revision check of a key's service; false when the call failed. */
async function check(s: PeerState, key: string, entry: PeerEntry): Promise<boolean> {
  const { namespaceName, serviceName } = entry.service;
  let revision: number;
  try {
    revision = await s.opts.cloudMap.discoverInstancesRevision(namespaceName, serviceName);
  } catch (error) {
    // Gone from Cloud Map: the reconcile of the key re-creates it or un-exports.
    if (isCloudMapNotFound(error)) return true;
    s.opts.logger.debug('peer revision check failed', {
      [logFields.key]: key,
      [logFields.error]: error,
    });
    return false;
  }
  // The key may have been un-watched (or re-pointed) while the call was in flight.
  if (s.entries.get(key) !== entry) return true;
  entry.checkedAtMs = s.opts.clock.now();
  if (entry.revision !== undefined && revision <= entry.revision) return true;
  const first = entry.revision === undefined;
  entry.revision = revision;
  // The first revision only sets the baseline: the reconcile that started the watch has
  // just read this service.
  if (!first) s.opts.onChange(key);
  return true;
}

/** The feed step (core's follower, shared with the import agent); false when a call failed. */
async function followFeed(s: PeerState): Promise<boolean> {
  const feed = feedOf(s);
  if (feed === undefined) return true;
  await observeHeartbeats(s, feed);
  const wasBaselined = feed.baselined;
  const result = await feed.round();
  if (result.recheckHeartbeats) s.heartbeatsRecheck = true;
  // The first read only adopts the records, and it comes a round after the reconciles that
  // started the watches read their services: a peer's change announced in between would be
  // missed. So every key watched then is checked once; a gap likewise.
  const baseline = !wasBaselined && feed.baselined && feed.writers.size > 0;
  if (baseline || result.sweep) for (const key of [...s.entries.keys()]) changed(s, key);
  else for (const svc of result.read) changed(s, `${svc.namespace}/${svc.name}`);
  return result.ok;
}

/** The follower, created once this cluster's identity is known. */
function feedOf(s: PeerState): FeedFollower | undefined {
  if (s.feed !== undefined) return s.feed;
  const self = s.opts.identity();
  if (self === undefined) return undefined;
  s.feed = createFeedFollower({
    cloudMap: s.opts.cloudMap,
    clustersetId: self.clustersetId,
    ownClusterId: self.clusterId,
    heartbeatTtlMs: PEER_HEARTBEAT_TTL_MS,
    clock: s.opts.clock,
    logger: s.opts.logger,
  });
  return s.feed;
}

/** Heartbeats are what vouch for other clusters' feed records: the watched namespaces' every 30 s. */
const PEER_HEARTBEAT_READ_MS = 30_000;
/** A heartbeat not seen renewed for this long vouches for no feed record (the importers' default). */
const PEER_HEARTBEAT_TTL_MS = 120_000;
const PEER_HEARTBEAT_RECHECK_MS = 5000;
/** Per-service revision checks in flight at once. */
const PEER_CHECK_CONCURRENCY = 4;

async function observeHeartbeats(s: PeerState, feed: FeedFollower): Promise<void> {
  const now = s.opts.clock.now();
  const namespaces = new Set([...s.entries.values()].map((e) => e.service.namespaceName));
  for (const ns of s.heartbeatsReadAt.keys())
    if (!namespaces.has(ns)) {
      s.heartbeatsReadAt.delete(ns);
      feed.forgetNamespace(ns);
    }
  for (const ns of namespaces) {
    const age = now - (s.heartbeatsReadAt.get(ns) ?? -Infinity);
    // At the period, or sooner (never more than every 5 s) when the feed asked.
    if (age < (s.heartbeatsRecheck ? PEER_HEARTBEAT_RECHECK_MS : PEER_HEARTBEAT_READ_MS)) continue;
    try {
      const read = await s.opts.cloudMap.discoverInstances(ns, HEARTBEAT_SERVICE_NAME);
      s.heartbeatsReadAt.set(ns, now);
      feed.observeHeartbeats(
        ns,
        decodeHeartbeats(read.instances, { clustersetId: feed.clustersetId }).heartbeats,
      );
    } catch (error) {
      if (isCloudMapNotFound(error)) {
        s.heartbeatsReadAt.set(ns, now);
        feed.observeHeartbeats(ns, []);
      } else throw error;
    }
  }
  s.heartbeatsRecheck = false;
}

/**
 * Rounds between count checks: `countEveryRounds` (default 12), stretched so the ListServices pages of a check
 * stay within the budget (1,000 exports in one namespace: 10 pages, at 3 a minute and a 3 s
 * round every 67 rounds, 200 s, instead of every 36 s).
 */
function countEveryRounds(s: PeerState): number {
  const every = Math.max(1, s.opts.countEveryRounds ?? 12);
  const budget = s.opts.countBudgetPerMinute ?? 0;
  if (budget <= 0 || s.opts.periodMs <= 0) return every;
  return Math.max(every, Math.ceil((s.countCalls * 60_000) / (budget * s.opts.periodMs)));
}

/** Requeues watched keys whose service's instance count moved since the last count. */
async function checkCounts(s: PeerState): Promise<void> {
  const counted = [...s.entries].filter(([, e]) => e.service.namespaceId !== undefined);
  const byNamespace = Map.groupBy(counted, ([, e]) => e.service.namespaceId as string);
  s.countCalls = 0;
  for (const [namespaceId, list] of byNamespace) {
    const listed = await s.opts.cloudMap.listServices(namespaceId);
    s.countCalls += listServicesPages(listed.length);
    const counts = new Map(listed.map((x) => [x.name, x.instanceCount]));
    for (const [key, e] of list) {
      const count = counts.get(e.service.serviceName);
      if (count === undefined) continue;
      if (e.count !== undefined && e.count !== count) changed(s, key);
      e.count = count;
    }
  }
}

/** One round: the feed, every `countEvery` rounds the counts, then each foreign key's revision. */
export async function peerRound(s: PeerState): Promise<void> {
  const { logger } = s.opts;
  if (s.entries.size === 0) return;
  s.rounds++;
  let failed = 0;
  // A call that throws, or a step that answers false, counts as failed.
  const attempt = async (fn: () => Promise<boolean | void>): Promise<void> => {
    try {
      if ((await fn()) === false) failed++;
    } catch (error) {
      failed++;
      logger.debug('peer watch call failed', { [logFields.error]: error });
    }
  };
  await attempt(() => followFeed(s));
  if (++s.sinceCount >= countEveryRounds(s)) {
    s.sinceCount = 0;
    await attempt(() => checkCounts(s));
  }
  const work = [...s.entries].filter(([, e]) => foreign(s, e));
  await inPool(work, PEER_CHECK_CONCURRENCY, ([key, e]) => attempt(() => check(s, key, e)));
  // One line per outage, not one per service and round.
  if (failed > 0 && !s.failing) {
    logger.warn('peer revision checks failing; conflicts follow other clusters on resync', {
      failed,
    });
  } else if (failed === 0 && s.failing) {
    logger.info('peer revision checks recovered');
  }
  s.failing = failed > 0;
}
