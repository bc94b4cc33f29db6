import {
  isCloudMapError,
  logFields,
  type Clock,
  type CloudMapPort,
  type Logger,
  type TimerHandle,
} from '@cloudmap-mcs/core';

/**
 * How the export agent learns that another cluster changed a service it exports (exported it,
 * un-exported it, or changed it), so each ServiceExport's `Conflict` condition follows the
 * other clusters without a local event (issue 12). The reconciler says which Cloud Map service
 * each exported key lives in and which revision it last read; the watch calls `onChange(key)`
 * when that service moved past it.
 *
 * Kept behind this interface on purpose: issue 14 replaces the per-service revision poll
 * below with one clusterset change feed, without touching the reconciler.
 */
export interface PeerWatch {
  /** Watches `key`'s Cloud Map service; `seenRevision` is the revision the reconcile read. */
  watch(key: string, service: WatchedService, seenRevision?: number): void;
  /** Stops watching `key` (un-exported, or its export is no longer valid). */
  unwatch(key: string): void;
  /** How many keys are watched (tests, metrics). */
  size(): number;
  start(): void;
  stop(): Promise<void>;
}

export interface WatchedService {
  namespaceName: string;
  serviceName: string;
}

export interface RevisionPeerWatchOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstancesRevision'>;
  clock: Clock;
  /** One `DiscoverInstancesRevision` per watched service per period. */
  periodMs: number;
  /** At most this many checks per second: more services stretch the period (0: no limit). */
  budgetPerSecond: number;
  /** Calls made at once within a round. */
  concurrency?: number;
  /** Up to this fraction of a period added at random, so clusters spread out. */
  jitter?: number;
  random?: () => number;
  onChange: (key: string) => void;
  logger: Logger;
}

interface Entry {
  service: WatchedService;
  /** Highest revision seen (by the reconcile or by this watch); undefined before the first. */
  revision: number | undefined;
}

/** The period of a round over `count` services within the budget (pure, for the docs' math). */
export function peerRoundPeriodMs(periodMs: number, count: number, budgetPerSecond: number) {
  if (budgetPerSecond <= 0) return periodMs;
  return Math.max(periodMs, Math.ceil((count / budgetPerSecond) * 1000));
}

/**
 * The revision poll: every period, one `DiscoverInstancesRevision` per watched service (the
 * data plane's cheap call; Cloud Map's quota is 3,000/s per account), and `onChange` only when
 * the revision moved past the highest one seen. Instances are never read here: the reconcile
 * that follows reads them, and the Cloud Map client drops its cached read when a revision
 * check finds it outdated. Rounds never overlap: the next is scheduled when one ends.
 */
export function createRevisionPeerWatch(opts: RevisionPeerWatchOptions): PeerWatch {
  const { clock, logger } = opts;
  const entries = new Map<string, Entry>();
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const random = opts.random ?? Math.random;
  let timer: TimerHandle | undefined;
  let round: Promise<void> = Promise.resolve();
  let running = false;
  let failing = false;

  async function check(key: string, entry: Entry): Promise<boolean> {
    const { namespaceName, serviceName } = entry.service;
    let revision: number;
    try {
      revision = await opts.cloudMap.discoverInstancesRevision(namespaceName, serviceName);
    } catch (error) {
      // Gone from Cloud Map: the reconcile of the key re-creates it or un-exports.
      if (isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound'))
        return true;
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

  async function runRound(): Promise<void> {
    const work = [...entries];
    let failed = 0;
    const next = async (): Promise<void> => {
      for (let item = work.shift(); item !== undefined; item = work.shift()) {
        if (!(await check(item[0], item[1]))) failed++;
      }
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
    const base = peerRoundPeriodMs(opts.periodMs, entries.size, opts.budgetPerSecond);
    const delay = Math.round(base * (1 + Math.max(0, opts.jitter ?? 0.1) * random()));
    timer = clock.setTimer(() => {
      round = runRound()
        .catch((error: unknown) => logger.warn('peer watch round failed', { err: error }))
        .finally(schedule);
    }, delay);
  };

  return {
    watch(key, service, seenRevision) {
      const entry = entries.get(key);
      const same =
        entry !== undefined &&
        entry.service.namespaceName === service.namespaceName &&
        entry.service.serviceName === service.serviceName;
      if (!same) {
        entries.set(key, { service: { ...service }, revision: seenRevision });
        return;
      }
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
