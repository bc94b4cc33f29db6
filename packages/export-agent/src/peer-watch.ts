import {
  Attr,
  decodeFeeds,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  logFields,
  planFeedRead,
  type Clock,
  type CloudMapPort,
  type FeedCursor,
  type Logger,
  type TimerHandle,
} from '@cloudmap-mcs/core';

/**
 * How the export agent learns that another cluster changed a service it exports (exported it,
 * un-exported it, or changed it), so each ServiceExport's `Conflict` condition follows the
 * other clusters without a local event (issue 12). The reconciler says which Cloud Map service
 * each exported key lives in, which revision it last read and which other clusters it saw
 * there; the watch calls `onChange(key)` when one of them changed it.
 */
export interface PeerWatch {
  /**
   * Watches `key`'s Cloud Map service; `seenRevision` is the revision the reconcile read,
   * `others` the ids of the other clusters whose records it saw there.
   */
  watch(
    key: string,
    service: WatchedService,
    seenRevision?: number,
    others?: readonly string[],
  ): void;
  /** Stops watching `key` (un-exported, or its export is no longer valid). */
  unwatch(key: string): void;
  /** How many keys are watched (tests, metrics). */
  size(): number;
  start(): void;
  stop(): Promise<void>;
}

interface WatchedService {
  namespaceName: string;
  serviceName: string;
  /** For the instance-count check (ListServices of the namespace); absent: no such check. */
  namespaceId?: string;
}

export interface PeerWatchOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstancesRevision' | 'discoverInstances' | 'listServices'>;
  clock: Clock;
  /** The round: the feed's revision, and the revision of each key the feed cannot vouch for. */
  periodMs: number;
  /** At most this many per-service checks per second: more stretch the period (0: no limit). */
  budgetPerSecond: number;
  /** This cluster's identity (its own feed entries are its own writes). */
  identity: () => { clusterId: string; clustersetId: string } | undefined;
  /** Every this many rounds, the instance counts of the watched services (default 12). */
  countEveryRounds?: number;
  concurrency?: number;
  /** Up to this fraction of a period added at random, so clusters spread out. */
  jitter?: number;
  random?: () => number;
  onChange: (key: string) => void;
  /**
   * Drops cached reads of a service before its key is requeued for a change the feed or an
   * instance count announced (a revision check does it by itself in the Cloud Map client).
   */
  forget?: (namespaceName: string, serviceName: string) => void;
  logger: Logger;
}

interface Entry {
  service: WatchedService;
  /** Highest revision seen (by the reconcile or by this watch); undefined before the first. */
  revision: number | undefined;
  others: readonly string[];
  /** ListServices' InstanceCount at the last count check. */
  count?: number;
}

/** The period of a round over `count` services within the budget (pure, for the docs' math). */
export function peerRoundPeriodMs(periodMs: number, count: number, budgetPerSecond: number) {
  if (budgetPerSecond <= 0) return periodMs;
  return Math.max(periodMs, Math.ceil((count / budgetPerSecond) * 1000));
}

const gone = (error: unknown): boolean =>
  isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound');

/**
 * The watch over the clusterset change feed (ADR 0018). Each round: one revision check of the
 * feed service; when it moved, the feed is read and every watched key another cluster's
 * entry names is requeued (all of them when the feed cannot say: a new writer, a new epoch,
 * a gap, a writer gone). Keys with records of clusters that do not write the feed (the AWS
 * controller, older agents), and every key while there is no feed, keep a revision check per
 * round. Every `countEveryRounds` rounds the namespaces' ListServices instance counts catch
 * a non-writer joining a service the feed vouched for. Instances are never read here: the
 * reconcile that follows reads them. Rounds never overlap; nothing is called with no keys.
 */
export function createPeerWatch(opts: PeerWatchOptions): PeerWatch {
  const { clock, logger } = opts;
  const entries = new Map<string, Entry>();
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const random = opts.random ?? Math.random;
  const countEvery = Math.max(1, opts.countEveryRounds ?? 12);
  let timer: TimerHandle | undefined;
  let round: Promise<void> = Promise.resolve();
  let running = false;
  let failing = false;
  let rounds = 0;
  let cursors = new Map<string, FeedCursor>();
  let baselined = false;
  let feedRevision: number | undefined;
  /** Clusters with a valid feed record (this one included); empty: no feed. */
  let writers = new Set<string>();

  const foreign = (e: Entry): boolean =>
    writers.size === 0 || e.others.some((c) => !writers.has(c));

  /** Requeues a watched key; its service's cached reads go first, so the reconcile sees news. */
  const changed = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    opts.forget?.(entry.service.namespaceName, entry.service.serviceName);
    opts.onChange(key);
  };

  /** One revision check of a key's service; false when the call failed. */
  async function check(key: string, entry: Entry): Promise<boolean> {
    const { namespaceName, serviceName } = entry.service;
    let revision: number;
    try {
      revision = await opts.cloudMap.discoverInstancesRevision(namespaceName, serviceName);
    } catch (error) {
      // Gone from Cloud Map: the reconcile of the key re-creates it or un-exports.
      if (gone(error)) return true;
      logger.debug('peer revision check failed', {
        [logFields.key]: key,
        [logFields.error]: error,
      });
      return false;
    }
    // The key may have been un-watched (or re-pointed) while the call was in flight.
    if (entries.get(key) !== entry) return true;
    if (entry.revision !== undefined && revision <= entry.revision) return true;
    const first = entry.revision === undefined;
    entry.revision = revision;
    // The first revision only sets the baseline: the reconcile that started the watch has
    // just read this service.
    if (!first) opts.onChange(key);
    return true;
  }

  /** The feed step; false when a call failed. */
  async function followFeed(): Promise<boolean> {
    const self = opts.identity();
    if (self === undefined) return true;
    const service = feedServiceName(self.clustersetId);
    try {
      const revision = await opts.cloudMap.discoverInstancesRevision(FEED_NAMESPACE_NAME, service);
      if (revision === feedRevision) return true;
      const read = await opts.cloudMap.discoverInstances(FEED_NAMESPACE_NAME, service, {
        [Attr.ClustersetId]: self.clustersetId,
      });
      feedRevision = read.revision;
      const { feeds, rejected } = decodeFeeds(read.instances, { clustersetId: self.clustersetId });
      for (const r of rejected) logger.debug('change feed instance ignored', { ...r });
      writers = new Set(feeds.map((f) => f.cluster.clusterId));
      const theirs = feeds.filter((f) => f.cluster.clusterId !== self.clusterId);
      const plan = planFeedRead(cursors, theirs, baselined);
      cursors = plan.cursors;
      const first = !baselined;
      baselined = true;
      // The first read only sets the cursors, and it comes a round after the reconciles that
      // started the watches read their services: a peer's change announced in between would
      // be adopted unseen. So every key watched then is checked once.
      if (first) {
        for (const key of [...entries.keys()]) changed(key);
        return true;
      }
      if (plan.sweep.length > 0) {
        logger.debug('change feed cannot say what changed; re-checking every export', {
          clusters: plan.sweep,
        });
        for (const key of [...entries.keys()]) changed(key);
        return true;
      }
      for (const s of plan.services) changed(`${s.namespace}/${s.name}`);
      return true;
    } catch (error) {
      if (!gone(error)) throw error;
      // No feed: every key is checked on its own until one appears.
      if (writers.size > 0) for (const key of [...entries.keys()]) changed(key);
      writers = new Set();
      cursors = new Map();
      feedRevision = undefined;
      baselined = true;
      return true;
    }
  }

  /** Requeues watched keys whose service's instance count moved since the last count. */
  async function checkCounts(): Promise<boolean> {
    const byNamespace = new Map<string, [string, Entry][]>();
    for (const [key, e] of entries) {
      if (e.service.namespaceId === undefined) continue;
      const list = byNamespace.get(e.service.namespaceId) ?? [];
      list.push([key, e]);
      byNamespace.set(e.service.namespaceId, list);
    }
    for (const [namespaceId, list] of byNamespace) {
      const counts = new Map(
        (await opts.cloudMap.listServices(namespaceId)).map((s) => [s.name, s.instanceCount]),
      );
      for (const [key, e] of list) {
        const count = counts.get(e.service.serviceName);
        if (count === undefined) continue;
        if (e.count !== undefined && e.count !== count) changed(key);
        e.count = count;
      }
    }
    return true;
  }

  async function runRound(): Promise<void> {
    if (entries.size === 0) return;
    rounds++;
    let failed = 0;
    const attempt = async (fn: () => Promise<boolean>): Promise<void> => {
      try {
        if (!(await fn())) failed++;
      } catch (error) {
        failed++;
        logger.debug('peer watch call failed', { [logFields.error]: error });
      }
    };
    await attempt(followFeed);
    if (rounds % countEvery === 0) await attempt(checkCounts);
    const work = [...entries].filter(([, e]) => foreign(e));
    const next = async (): Promise<void> => {
      for (let item = work.shift(); item !== undefined; item = work.shift())
        await attempt(() => check(item[0], item[1]));
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, work.length) }, next));
    // One line per outage, not one per service and round.
    if (failed > 0 && !failing) {
      logger.warn('peer revision checks failing; conflicts follow other clusters on resync', {
        failed,
      });
    } else if (failed === 0 && failing) {
      logger.info('peer revision checks recovered');
    }
    failing = failed > 0;
  }

  const schedule = (): void => {
    if (!running) return;
    const checked = [...entries.values()].filter(foreign).length;
    const base = peerRoundPeriodMs(opts.periodMs, checked, opts.budgetPerSecond);
    const delay = Math.round(base * (1 + Math.max(0, opts.jitter ?? 0.1) * random()));
    timer = clock.setTimer(() => {
      round = runRound()
        .catch((error: unknown) => logger.warn('peer watch round failed', { err: error }))
        .finally(schedule);
    }, delay);
  };

  return {
    watch(key, service, seenRevision, others = []) {
      const entry = entries.get(key);
      const same =
        entry !== undefined &&
        entry.service.namespaceName === service.namespaceName &&
        entry.service.serviceName === service.serviceName;
      if (!same) {
        const { namespaceName, serviceName, namespaceId } = service;
        entries.set(key, {
          service: {
            namespaceName,
            serviceName,
            ...(namespaceId === undefined ? {} : { namespaceId }),
          },
          revision: seenRevision,
          others: [...others],
        });
        return;
      }
      entry.others = [...others];
      if (seenRevision !== undefined && (entry.revision ?? -1) < seenRevision)
        entry.revision = seenRevision;
    },
    unwatch: (key) => void entries.delete(key),
    size: () => entries.size,
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    async stop() {
      running = false;
      if (timer !== undefined) clock.clearTimer(timer);
      await round;
    },
  };
}
