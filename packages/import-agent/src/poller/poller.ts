import {
  FEED_NAMESPACE_NAME,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  isCloudMapError,
  isShardServiceName,
  logFields,
  type CloudMapInstance,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import { createFeedFollower } from './feed.js';
import { listingRound } from './listing.js';
import type { Poller, PollerOptions, RoundKind } from './options.js';
import { createServiceReads } from './reads.js';
import { backoff, fastPeriodFor, withJitter } from './schedule.js';
import { mergedSnapshot } from './shards.js';
import type { ServiceSnapshot } from './snapshot.js';
import { createPollerState, describe, inPool, keyOf } from './state.js';

export type { Poller, PollerMetrics, PollerOptions } from './options.js';

/**
 * Keeps a snapshot of Cloud Map for one clusterset, as cheaply as Cloud Map allows:
 *
 * - fast round (every `feedMs`): the change feed's revision (feed.ts, ADR 0018); when it
 *   moved, the services it names are read, new ones at once. Services the feed does not vouch
 *   for (records of clusters that do not write it: the AWS controller, non-Kubernetes
 *   writers, older agents; services whose last read failed) get a DiscoverInstancesRevision
 *   every `fastMs`, heartbeat services every `heartbeatMs`. Without a feed (`feedMs` 0) the
 *   round runs every `fastMs` and checks every service, as aws-controller.md §9.1 fixed.
 * - slow round (`slowMs`): namespaces and services are listed (listing.ts).
 * - resync (`resyncMs`), and sweeps the feed asks for: every service is read again.
 *
 * Only namespaces that exist in this cluster are read (namespace sameness) and only records
 * of this clusterset. A failed read keeps the last good state; a service is dropped only when
 * a successful listing no longer shows it.
 *
 * Outages (issue 11): while no call succeeds, the fast round shrinks to one probe call per
 * period (no growing backoff), and the first successful call resets every backoff and runs
 * a slow round at once. Each snapshot entry says when it was last confirmed (`confirmedAtMs`).
 */
export function createPoller(opts: PollerOptions): Poller {
  const state = createPollerState(opts);
  const { port, clock, services, log } = state;
  const { periods } = opts;
  const random = opts.random ?? Math.random;
  const reads = createServiceReads(state);
  const feedMs = periods.feedMs ?? 0;
  const heartbeatMs = periods.heartbeatMs ?? periods.fastMs;
  const failures: Record<RoundKind, number> = { slow: 0, fast: 0, resync: 0 };
  const timers: Partial<Record<RoundKind, TimerHandle>> = {};
  const inFlight = new Set<Promise<void>>();
  let stopped = true;

  const background = (work: Promise<void>): void => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  // One sweep queued behind the running one at most: several reasons in one feed read, or a
  // burst of writer restarts, coalesce.
  let sweepQueued = false;
  const requestSweep = (): void => {
    if (sweepQueued || stopped) return;
    sweepQueued = true;
    background(
      (async () => {
        while (running.slow !== undefined || running.resync !== undefined)
          await (running.slow ?? running.resync);
        sweepQueued = false;
        if (!stopped) await run('slow');
        if (!stopped) await run('resync');
      })(),
    );
  };
  const feed = feedMs > 0 ? createFeedFollower({ state, reads, sweep: requestSweep }) : undefined;

  /**
   * The first success after an outage: forget every backoff and run a slow round now (a
   * service created or deleted during the outage is found at once).
   */
  state.onRecovered = () => {
    const slowFailed = failures.slow > 0;
    failures.slow = 0;
    failures.fast = 0;
    failures.resync = 0;
    const waiting = timers.slow;
    if (slowFailed && waiting !== undefined) {
      clock.clearTimer(waiting);
      delete timers.slow;
      schedule('slow', 0);
    }
  };

  const covered = (s: ServiceSnapshot): boolean =>
    s.name !== HEARTBEAT_SERVICE_NAME && (feed?.covers(s) ?? false);

  /** While Cloud Map is unreachable a fast round is one call. True when it succeeded. */
  const probe = async (): Promise<boolean> => {
    const all = [...services.values()];
    const target = all.find((s) => s.name === HEARTBEAT_SERVICE_NAME) ?? all[0];
    try {
      if (feed !== undefined)
        await port
          .discoverInstancesRevision(FEED_NAMESPACE_NAME, feedServiceName(opts.clustersetId))
          .catch((e: unknown) => {
            // No feed service is an answer: Cloud Map is reachable.
            if (!isCloudMapError(e, 'ServiceNotFound') && !isCloudMapError(e, 'NamespaceNotFound'))
              throw e;
          });
      else if (target === undefined) await port.listNamespaces();
      else await port.discoverInstancesRevision(target.namespace, target.name);
      state.callSucceeded();
      return true;
    } catch (error) {
      state.readError(target === undefined ? 'listNamespaces' : 'discoverInstancesRevision');
      log.debug('cloud map probe failed', { [logFields.error]: describe(error) });
      return false;
    }
  };

  /** The services whose own revision is due: not vouched for by the feed, period elapsed. */
  const dueServices = (): ServiceSnapshot[] => {
    const all = [...services.values()];
    if (feed === undefined) return all;
    const uncovered = all.filter((s) => s.name !== HEARTBEAT_SERVICE_NAME && !covered(s));
    const period = fastPeriodFor(periods, uncovered.length, opts.requestBudgetPerSecond);
    // Half a round of slack: a check falls in the round nearest its due time, not the next.
    const slack = feedMs / 2;
    const now = clock.now();
    const due = (s: ServiceSnapshot, every: number): boolean =>
      now - (reads.checkedAt(keyOf(s.namespace, s.name)) ?? -Infinity) >= every - slack;
    return [
      ...all.filter((s) => s.name === HEARTBEAT_SERVICE_NAME && due(s, heartbeatMs)),
      ...uncovered.filter((s) => due(s, period)),
    ];
  };

  const fastRound = async (): Promise<boolean> => {
    if (state.unreachable && !(await probe())) return false;
    let attempts = 0;
    let failed = 0;
    if (feed !== undefined) {
      attempts++;
      if (!(await feed.round())) failed++;
    }
    const due = dueServices();
    attempts += due.length;
    await inPool(due, state.concurrency, async (s) => {
      if (!(await reads.check(s))) failed++;
    });
    // A round fails only when nothing in it succeeded (issue 12).
    return failed === 0 || failed < attempts;
  };

  const slowRound = async (): Promise<boolean> => {
    // The feed's baseline comes first: the listing that follows reads everything after it.
    if (feed !== undefined && !feed.baselined) await feed.round();
    return listingRound(state, reads, feed !== undefined);
  };

  const resyncRound = async (): Promise<boolean> => {
    let ok = true;
    await inPool([...services.values()], state.concurrency, async (s) => {
      if (!(await reads.fetch(s))) ok = false;
    });
    return ok;
  };

  // One round of a kind at a time: a refresh asked for during a slow round waits for it.
  const running: Partial<Record<RoundKind, Promise<void>>> = {};
  const run = async (kind: RoundKind): Promise<void> => {
    while (running[kind] !== undefined) await running[kind];
    const round = runOnce(kind);
    running[kind] = round;
    try {
      await round;
    } finally {
      delete running[kind];
    }
  };

  const runOnce = async (kind: RoundKind): Promise<void> => {
    const started = clock.now();
    const successesBefore = state.successes;
    const ok = await (kind === 'slow'
      ? slowRound()
      : kind === 'fast'
        ? fastRound()
        : resyncRound());
    failures[kind] = ok ? 0 : failures[kind] + 1;
    // A failed round in which no call succeeded: Cloud Map cannot be reached from here.
    if (!ok && state.successes === successesBefore) state.unreachable = true;
    if (ok && kind !== 'fast') {
      state.lastGoodMs = state.now();
      const allRead = [...services.values()].every((s) => s.fetchedAtMs !== undefined);
      if (!state.synced && kind === 'slow' && allRead) {
        state.synced = true;
        log.info('cloud map snapshot synced', { services: services.size });
      }
    }
    opts.metrics?.round?.(kind, ok, clock.now() - started);
    state.reportHealth();
  };

  const schedule = (kind: RoundKind, delayMs: number): void => {
    if (stopped) return;
    timers[kind] = clock.setTimer(() => {
      delete timers[kind];
      const round = run(kind).finally(() => {
        inFlight.delete(round);
        schedule(kind, nextDelay(kind));
      });
      inFlight.add(round);
    }, delayMs);
  };

  const nextDelay = (kind: RoundKind): number => {
    const fast =
      feed !== undefined
        ? feedMs
        : fastPeriodFor(periods, services.size, opts.requestBudgetPerSecond);
    const base = kind === 'slow' ? periods.slowMs : kind === 'fast' ? fast : periods.resyncMs;
    // Until the first complete snapshot, retry the slow round at the fast period.
    const first = kind === 'slow' && !state.synced ? Math.min(base, periods.fastMs) : base;
    // While unreachable the fast round is a single probe call: keep it at the fast period so
    // recovery is seen within one period, instead of backing off to maxBackoffMs.
    const failed = kind === 'fast' && state.unreachable ? 0 : failures[kind];
    return withJitter(backoff(first, failed, periods.maxBackoffMs), periods.jitter, random());
  };

  /** A Kubernetes Service's snapshot: its base service merged with its shards. */
  const view = (s: ServiceSnapshot): ServiceSnapshot =>
    mergedSnapshot(s, opts.clustersetId, (name) => services.get(keyOf(s.namespace, name)));
  const isImport = (s: ServiceSnapshot): boolean =>
    s.name !== HEARTBEAT_SERVICE_NAME && !isShardServiceName(s.name);

  return {
    get synced() {
      return state.synced;
    },
    get tracked() {
      return services.size;
    },
    get feedCovered() {
      return [...services.values()].filter(covered).length;
    },
    get(namespace, name) {
      if (name === HEARTBEAT_SERVICE_NAME || isShardServiceName(name)) return undefined;
      const s = services.get(keyOf(namespace, name));
      return s === undefined ? undefined : view(s);
    },
    services(namespace) {
      return [...services.values()]
        .filter((s) => s.namespace === namespace && isImport(s))
        .map(view);
    },
    allServices() {
      return [...services.values()].filter(isImport).map(view);
    },
    heartbeats(namespace): readonly CloudMapInstance[] {
      return services.get(keyOf(namespace, HEARTBEAT_SERVICE_NAME))?.instances ?? [];
    },
    heartbeatService(namespace) {
      return services.get(keyOf(namespace, HEARTBEAT_SERVICE_NAME));
    },
    health: () => state.health(),
    start() {
      if (!stopped) return;
      stopped = false;
      schedule('slow', 0);
      const fast = feed !== undefined ? feedMs : periods.fastMs;
      schedule('fast', withJitter(fast, periods.jitter, random()));
      schedule('resync', withJitter(periods.resyncMs, periods.jitter, random()));
    },
    async stop() {
      stopped = true;
      for (const kind of ['slow', 'fast', 'resync'] as const) {
        const t = timers[kind];
        if (t !== undefined) clock.clearTimer(t);
        delete timers[kind];
      }
      await Promise.all([...inFlight]);
    },
    async refreshNow() {
      await run('slow');
    },
  };
}
