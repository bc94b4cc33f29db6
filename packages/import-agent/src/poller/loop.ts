import type { TimerHandle } from '@cloudmap-mcs/core';
import type { RoundKind } from './options.js';
import {
  backoff,
  fastPeriodFor,
  listingPeriodFor,
  refreshIntervalFor,
  withJitter,
  type PollPeriods,
} from './schedule.js';
import type { PollerState } from './state.js';

/**
 * The poller's timers (poller.ts): one timer per round kind, one round of a kind at a time,
 * backoff per kind while rounds fail, and the sweeps the change feed asks for.
 */
export interface RoundLoop {
  readonly state: PollerState;
  readonly periods: PollPeriods;
  readonly random: () => number;
  /** The fast round's period when the feed is on (0: no feed). */
  readonly feedMs: number;
  /** The rounds (rounds.ts); set once the feed follower exists. */
  rounds: Record<RoundKind, () => Promise<boolean>>;
  /** Consecutive failed rounds per kind. */
  readonly failures: Record<RoundKind, number>;
  readonly timers: Partial<Record<RoundKind, TimerHandle>>;
  /** The round of each kind running now. */
  readonly running: Partial<Record<RoundKind, Promise<void>>>;
  readonly inFlight: Set<Promise<void>>;
  stopped: boolean;
  /** One sweep queued behind the running one at most. */
  sweepQueued: boolean;
}

const noRound = (): Promise<boolean> => Promise.resolve(false);
const ROUND_KINDS = ['slow', 'fast', 'refresh', 'resync'] as const satisfies readonly RoundKind[];

export function createRoundLoop(state: PollerState): RoundLoop {
  const { periods } = state.opts;
  return {
    state,
    periods,
    random: state.opts.random ?? Math.random,
    feedMs: periods.feedMs ?? 0,
    rounds: { slow: noRound, fast: noRound, refresh: noRound, resync: noRound },
    failures: { slow: 0, fast: 0, refresh: 0, resync: 0 },
    timers: {},
    running: {},
    inFlight: new Set(),
    stopped: true,
    sweepQueued: false,
  };
}

/** Work outside any round (a sweep, the feed's reads) that `stopLoop` still waits for. */
export function background(loop: RoundLoop, work: Promise<void>): void {
  loop.inFlight.add(work);
  void work.finally(() => loop.inFlight.delete(work));
}

/**
 * A slow round and a resync after the running ones. Several reasons in one feed read, or a
 * burst of writer restarts, coalesce.
 */
export function requestSweep(loop: RoundLoop): void {
  if (loop.sweepQueued || loop.stopped) return;
  loop.sweepQueued = true;
  background(
    loop,
    (async () => {
      const { running } = loop;
      while (running.slow !== undefined || running.resync !== undefined)
        await (running.slow ?? running.resync);
      loop.sweepQueued = false;
      if (!loop.stopped) await runRound(loop, 'slow');
      if (!loop.stopped) await runRound(loop, 'resync');
    })(),
  );
}

/**
 * The first success after an outage: forget every backoff and run a slow round now (a
 * service created or deleted during the outage is found at once).
 */
export function recovered(loop: RoundLoop): void {
  const { failures, timers } = loop;
  const slowFailed = failures.slow > 0;
  for (const kind of ROUND_KINDS) failures[kind] = 0;
  const waiting = timers.slow;
  if (slowFailed && waiting !== undefined) {
    loop.state.clock.clearTimer(waiting);
    delete timers.slow;
    schedule(loop, 'slow', 0);
  }
}

/** One round of a kind at a time: a refresh asked for during a slow round waits for it. */
export async function runRound(loop: RoundLoop, kind: RoundKind): Promise<void> {
  const { running } = loop;
  while (running[kind] !== undefined) await running[kind];
  const round = runOnce(loop, kind);
  running[kind] = round;
  try {
    await round;
  } finally {
    delete running[kind];
  }
}

async function runOnce(loop: RoundLoop, kind: RoundKind): Promise<void> {
  const { state, failures } = loop;
  const { clock, services, log } = state;
  const started = clock.now();
  const successesBefore = state.successes;
  const ok = await loop.rounds[kind]();
  failures[kind] = ok ? 0 : failures[kind] + 1;
  // A failed round in which no call succeeded: Cloud Map cannot be reached from here.
  if (!ok && state.successes === successesBefore) state.unreachable = true;
  if (ok && (kind === 'slow' || kind === 'resync')) {
    state.lastGoodMs = state.now();
    const allRead = [...services.values()].every((s) => s.fetchedAtMs !== undefined);
    if (!state.synced && kind === 'slow' && allRead) {
      state.synced = true;
      log.info('cloud map snapshot synced', { services: services.size });
    }
  }
  state.opts.metrics?.round?.(kind, ok, clock.now() - started);
  if (kind === 'slow' || kind === 'resync') state.opts.metrics?.lastGood?.(state.namespaceGoodMs);
  state.reportHealth();
}

function schedule(loop: RoundLoop, kind: RoundKind, delayMs: number): void {
  if (loop.stopped) return;
  const { timers, inFlight } = loop;
  timers[kind] = loop.state.clock.setTimer(() => {
    delete timers[kind];
    const round = runRound(loop, kind).finally(() => {
      inFlight.delete(round);
      schedule(loop, kind, nextDelay(loop, kind));
    });
    inFlight.add(round);
  }, delayMs);
}

function nextDelay(loop: RoundLoop, kind: RoundKind): number {
  const { state, periods, failures } = loop;
  const base =
    kind === 'slow'
      ? loop.feedMs > 0 && state.synced
        ? listingPeriodFor(periods, state.lastListing.calls, state.lastListing.paged)
        : periods.slowMs
      : kind === 'fast'
        ? loop.feedMs ||
          fastPeriodFor(periods, state.services.size, state.opts.requestBudgetPerSecond)
        : refreshIntervalFor(periods, state.services.size);
  // Until the first complete snapshot, retry the slow round at the fast period.
  const first = kind === 'slow' && !state.synced ? Math.min(base, periods.fastMs) : base;
  // While unreachable the fast round is a single probe call: keep it at the fast period so
  // recovery is seen within one period, instead of backing off to maxBackoffMs.
  const failed = kind === 'fast' && state.unreachable ? 0 : failures[kind];
  if (kind === 'fast' && loop.feedMs > 0 && failed === 0) return untilNextSlot(loop);
  return withJitter(backoff(first, failed, periods.maxBackoffMs), periods.jitter, loop.random());
}

/**
 * The feed round runs at wall-clock multiples of its period, not at a jittered period: every
 * importer of the clusterset then checks the feed at the same instants, so a change is seen
 * everywhere after the same wait (on average half a period) instead of after the longest of
 * K independent waits (3/4 of a period for 3 clusters, 10/11 for 10; ADR 0018). The few
 * simultaneous calls are one per cluster, far below any Cloud Map limit.
 */
function untilNextSlot(loop: RoundLoop): number {
  const { feedMs } = loop;
  return feedMs - (((loop.state.now() % feedMs) + feedMs) % feedMs);
}

/**
 * Schedules the first round of each kind: the slow one at once, the feed at its slot, the
 * backstop jittered. A full resync runs only when a sweep asks for one.
 */
export function startLoop(loop: RoundLoop): void {
  if (!loop.stopped) return;
  loop.stopped = false;
  const { periods, random } = loop;
  schedule(loop, 'slow', 0);
  schedule(
    loop,
    'fast',
    loop.feedMs > 0 ? untilNextSlot(loop) : withJitter(periods.fastMs, periods.jitter, random()),
  );
  // The backstop trickles from the first listing period on (its interval needs the count of
  // services, unknown before the first listing), so its cost shows in any minute measured.
  schedule(loop, 'refresh', withJitter(periods.slowMs, periods.jitter, random()));
}

/** Stops scheduling and waits for every round in flight. */
export async function stopLoop(loop: RoundLoop): Promise<void> {
  loop.stopped = true;
  for (const kind of ROUND_KINDS) {
    const t = loop.timers[kind];
    if (t !== undefined) loop.state.clock.clearTimer(t);
    delete loop.timers[kind];
  }
  await Promise.all([...loop.inFlight]);
}
