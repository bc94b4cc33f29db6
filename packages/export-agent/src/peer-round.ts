import {
  Attr,
  decodeFeeds,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  listServicesPages,
  logFields,
  planFeedRead,
  type FeedCursor,
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
}

/** The peer watch's state (peer-watch.ts): the watched keys, the feed's cursors, the timer. */
export interface PeerState {
  readonly opts: PeerWatchOptions;
  readonly entries: Map<string, PeerEntry>;
  readonly concurrency: number;
  readonly random: () => number;
  readonly countEvery: number;
  timer: TimerHandle | undefined;
  round: Promise<void>;
  running: boolean;
  /** Whether the last round had a failed call (one log line per outage). */
  failing: boolean;
  rounds: number;
  /** Rounds since the last count check, and the ListServices pages that one took. */
  sinceCount: number;
  countCalls: number;
  cursors: Map<string, FeedCursor>;
  baselined: boolean;
  feedRevision: number | undefined;
  /** Clusters with a valid feed record (this one included); empty: no feed. */
  writers: Set<string>;
}

export function createPeerState(opts: PeerWatchOptions): PeerState {
  return {
    opts,
    entries: new Map(),
    concurrency: Math.max(1, opts.concurrency ?? 4),
    random: opts.random ?? Math.random,
    countEvery: Math.max(1, opts.countEveryRounds ?? 12),
    timer: undefined,
    round: Promise.resolve(),
    running: false,
    failing: false,
    rounds: 0,
    sinceCount: 0,
    countCalls: 0,
    cursors: new Map(),
    baselined: false,
    feedRevision: undefined,
    writers: new Set(),
  };
}

const gone = (error: unknown): boolean =>
  isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound');

/** Whether the feed cannot vouch for `e`: no feed, or another cluster that does not write it. */
export function foreign(s: PeerState, e: PeerEntry): boolean {
  return s.writers.size === 0 || e.others.some((c) => !s.writers.has(c));
}

/** Requeues a watched key; its service's cached reads go first, so the reconcile sees news. */
export function changed(s: PeerState, key: string): void {
  const entry = s.entries.get(key);
  if (entry === undefined) return;
  s.opts.forget?.(entry.service.namespaceName, entry.service.serviceName);
  s.opts.onChange(key);
}

function changedAll(s: PeerState): void {
  for (const key of [...s.entries.keys()]) changed(s, key);
}

/** One revision check of a key's service; false when the call failed. */
async function check(s: PeerState, key: string, entry: PeerEntry): Promise<boolean> {
  const { namespaceName, serviceName } = entry.service;
  let revision: number;
  try {
    revision = await s.opts.cloudMap.discoverInstancesRevision(namespaceName, serviceName);
  } catch (error) {
    // Gone from Cloud Map: the reconcile of the key re-creates it or un-exports.
    if (gone(error)) return true;
    s.opts.logger.debug('peer revision check failed', {
      [logFields.key]: key,
      [logFields.error]: error,
    });
    return false;
  }
  // The key may have been un-watched (or re-pointed) while the call was in flight.
  if (s.entries.get(key) !== entry) return true;
  if (entry.revision !== undefined && revision <= entry.revision) return true;
  const first = entry.revision === undefined;
  entry.revision = revision;
  // The first revision only sets the baseline: the reconcile that started the watch has
  // just read this service.
  if (!first) s.opts.onChange(key);
  return true;
}

/** The feed step; false when a call failed. */
async function followFeed(s: PeerState): Promise<boolean> {
  const { opts } = s;
  const self = opts.identity();
  if (self === undefined) return true;
  const service = feedServiceName(self.clustersetId);
  try {
    const revision = await opts.cloudMap.discoverInstancesRevision(FEED_NAMESPACE_NAME, service);
    if (revision === s.feedRevision) return true;
    const read = await opts.cloudMap.discoverInstances(FEED_NAMESPACE_NAME, service, {
      [Attr.ClustersetId]: self.clustersetId,
    });
    s.feedRevision = read.revision;
    const { feeds, rejected } = decodeFeeds(read.instances, { clustersetId: self.clustersetId });
    for (const r of rejected) opts.logger.debug('change feed instance ignored', { ...r });
    s.writers = new Set(feeds.map((f) => f.cluster.clusterId));
    const theirs = feeds.filter((f) => f.cluster.clusterId !== self.clusterId);
    const plan = planFeedRead(s.cursors, theirs, s.baselined);
    s.cursors = plan.cursors;
    const first = !s.baselined;
    s.baselined = true;
    // The first read only sets the cursors, and it comes a round after the reconciles that
    // started the watches read their services: a peer's change announced in between would
    // be adopted unseen. So every key watched then is checked once.
    if (first) {
      changedAll(s);
      return true;
    }
    if (plan.sweep.length > 0) {
      opts.logger.debug('change feed cannot say what changed; re-checking every export', {
        clusters: plan.sweep,
      });
      changedAll(s);
      return true;
    }
    for (const svc of plan.services) changed(s, `${svc.namespace}/${svc.name}`);
    return true;
  } catch (error) {
    if (!gone(error)) throw error;
    // No feed: every key is checked on its own until one appears.
    if (s.writers.size > 0) changedAll(s);
    s.writers = new Set();
    s.cursors = new Map();
    s.feedRevision = undefined;
    s.baselined = true;
    return true;
  }
}

/**
 * Rounds between count checks: `countEvery`, stretched so the ListServices pages of a check
 * stay within the budget (1,000 exports in one namespace: 10 pages, at 3 a minute and a 3 s
 * round every 67 rounds, 200 s, instead of every 36 s).
 */
export function countEveryRounds(s: PeerState): number {
  const budget = s.opts.countBudgetPerMinute ?? 0;
  if (budget <= 0 || s.opts.periodMs <= 0) return s.countEvery;
  const needed = Math.ceil((s.countCalls * 60_000) / (budget * s.opts.periodMs));
  return Math.max(s.countEvery, needed);
}

/** Requeues watched keys whose service's instance count moved since the last count. */
async function checkCounts(s: PeerState): Promise<boolean> {
  const byNamespace = new Map<string, [string, PeerEntry][]>();
  for (const [key, e] of s.entries) {
    if (e.service.namespaceId === undefined) continue;
    const list = byNamespace.get(e.service.namespaceId) ?? [];
    list.push([key, e]);
    byNamespace.set(e.service.namespaceId, list);
  }
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
  return true;
}

/** One round: the feed, every `countEvery` rounds the counts, then each foreign key's revision. */
export async function peerRound(s: PeerState): Promise<void> {
  const { logger } = s.opts;
  if (s.entries.size === 0) return;
  s.rounds++;
  let failed = 0;
  const attempt = async (fn: () => Promise<boolean>): Promise<void> => {
    try {
      if (!(await fn())) failed++;
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
  const next = async (): Promise<void> => {
    for (let item = work.shift(); item !== undefined; item = work.shift())
      await attempt(() => check(s, item[0], item[1]));
  };
  await Promise.all(Array.from({ length: Math.min(s.concurrency, work.length) }, next));
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
