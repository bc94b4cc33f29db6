import type { FeedRecord, Nudge, TimerHandle } from '@cloudmap-mcs/core';
import { runRound, type RoundLoop } from './loop.js';
import { createNudgeTrust, type NudgeTrust } from './nudge-trust.js';
import type { PollerNudgeOptions } from './options.js';
import type { PollerState } from './state.js';

/**
 * Runs the feed round when a writer nudges (ADR 0018 decision 11), and retries it while the
 * feed does not show the write yet: Cloud Map's reads lag its writes by up to a few hundred
 * milliseconds. Nudge rounds start at most every `minGapMs` (a burst of nudges, or a hostile
 * sender, costs at most 4 revision checks a second), one at a time with the scheduled fast
 * round (the round runner serialises them).
 */
export interface NudgeDriverOptions {
  state: PollerState;
  trust: NudgeTrust;
  /** Runs one fast round (the feed check first), after any running one. */
  runFeedRound: () => Promise<void>;
  minGapMs?: number;
  /** Retry delays after a round that did not show every nudged write. */
  retryMs?: readonly number[];
  /** A nudge whose write the feed does not show by then is given up (counted). */
  confirmMs?: number;
}

export interface NudgeDriver {
  nudge(nudge: Nudge): void;
  stop(): void;
}

const MAX_PENDING = 64;

interface Pending {
  nudge: Nudge;
  atMs: number;
}

export function createNudgeDriver(opts: NudgeDriverOptions): NudgeDriver {
  const { state, trust } = opts;
  const { clock } = state;
  const minGapMs = opts.minGapMs ?? 250;
  const retryMs = opts.retryMs ?? [100, 200, 400, 800];
  const confirmMs = opts.confirmMs ?? 3_000;
  // One waiting nudge per writer (the newest): a flood of nudges, forged or not, keeps this
  // to the writers that sent them, and forged cluster ids past MAX_PENDING are not tracked.
  const pending = new Map<string, Pending>();
  let timer: TimerHandle | undefined;
  let running = false;
  let lastStartMs = -Infinity;
  let retries = 0;
  let stopped = false;
  // A nudge arrived while a round ran: that round may have read the feed before the write.
  let again = false;

  const arm = (delayMs: number): void => {
    if (stopped || running || timer !== undefined) return;
    timer = clock.setTimer(
      () => {
        timer = undefined;
        void round();
      },
      Math.max(delayMs, lastStartMs + minGapMs - clock.now(), 0),
    );
  };

  const settle = (): void => {
    const now = clock.now();
    for (const [clusterId, p] of pending) {
      if (trust.shows(p.nudge)) pending.delete(clusterId);
      else if (now - p.atMs >= confirmMs) {
        pending.delete(clusterId);
        state.opts.metrics?.nudge?.('unconfirmed');
        state.log.debug('nudged write not seen in the change feed in time', {
          clusterId,
          seq: p.nudge.seq,
        });
      }
    }
  };

  const round = async (): Promise<void> => {
    running = true;
    lastStartMs = clock.now();
    try {
      await opts.runFeedRound();
    } finally {
      running = false;
    }
    settle();
    if (again) {
      again = false;
      arm(0);
      return;
    }
    if (pending.size === 0) {
      retries = 0;
      return;
    }
    arm(retryMs[Math.min(retries, retryMs.length - 1)] ?? 0);
    retries++;
  };

  return {
    nudge(nudge) {
      if (stopped) return;
      trust.nudged(nudge, clock.now());
      if (trust.shows(nudge)) return;
      if (pending.has(nudge.clusterId) || pending.size < MAX_PENDING)
        pending.set(nudge.clusterId, { nudge, atMs: clock.now() });
      retries = 0;
      if (running) again = true;
      else arm(0);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      pending.clear();
    },
  };
}

/** The poller's nudge side: the trust that sets the feed period, and the driver. */
export interface PollerNudges {
  /** Every feed read (the feed follower's hook). */
  observed(records: readonly FeedRecord[]): void;
  nudge(nudge: Nudge): void;
  readonly trusted: boolean;
  stop(): void;
}

const FIRST_DISTRUST_MS = 60_000;
const DISTRUST_MS = 600_000;
const MISS_WINDOW_MS = 2_000;

export function createPollerNudges(
  state: PollerState,
  loop: RoundLoop,
  opts: PollerNudgeOptions,
): PollerNudges {
  const { clock, log } = state;
  const metrics = state.opts.metrics;
  const trust = createNudgeTrust({
    localClusterId: opts.localClusterId,
    ownAddress: opts.ownAddress,
    settleMs: opts.settleMs,
    firstDistrustMs: FIRST_DISTRUST_MS,
    distrustMs: DISTRUST_MS,
    missWindowMs: MISS_WINDOW_MS,
  });
  const runFeedRound = (): Promise<void> => {
    if (loop.stopped) return Promise.resolve();
    const round = runRound(loop, 'fast');
    loop.inFlight.add(round);
    return round.finally(() => loop.inFlight.delete(round));
  };
  const driver = createNudgeDriver({ state, trust, runFeedRound });
  let trusted = false;
  let warnedAtMs = -Infinity;
  const evaluate = (): boolean => {
    const now = clock.now();
    const missed = trust.expire(now);
    if (missed > 0) {
      metrics?.nudgesMissed?.(missed);
      if (now - warnedAtMs >= DISTRUST_MS) {
        warnedAtMs = now;
        log.warn(
          'a writer changed the change feed without nudging this agent; polling the feed at the fast period for a while, longer with each further miss (check that export agents of other clusters reach this pod on its health port)',
          { missed, distrustMs: trust.penaltyMs() },
        );
      } else
        log.info('another change-feed write without a nudge', {
          missed,
          distrustMs: trust.penaltyMs(),
        });
    }
    const trustedNow = trust.trusted(now);
    if (trustedNow !== trusted) {
      trusted = trustedNow;
      metrics?.nudgesTrusted?.(trusted);
      log.info(
        trusted
          ? 'every change-feed writer nudges this agent; polling the feed at the nudged period'
          : 'nudges not trusted now; polling the feed at the fast period',
        { feedPeriodMs: trusted ? opts.nudgedFeedMs : loop.feedMs },
      );
    }
    return trusted;
  };
  metrics?.nudgesTrusted?.(false);
  loop.feedPeriod = () => (evaluate() ? opts.nudgedFeedMs : loop.feedMs);
  // A miss is judged when its window closes, not at the next (slow) round.
  let missCheck: TimerHandle | undefined;
  return {
    observed: (records) => {
      trust.observed(records, clock.now());
      evaluate();
      missCheck ??= clock.setTimer(() => {
        missCheck = undefined;
        evaluate();
      }, MISS_WINDOW_MS + 1);
    },
    nudge: (nudge) => {
      metrics?.nudge?.('accepted');
      driver.nudge(nudge);
    },
    get trusted() {
      return trusted;
    },
    stop: () => {
      if (missCheck !== undefined) clock.clearTimer(missCheck);
      missCheck = undefined;
      driver.stop();
    },
  };
}
