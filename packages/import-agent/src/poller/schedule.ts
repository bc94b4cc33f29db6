/**
 * Period arithmetic for the poller, pure so it is tested without timers.
 */
export interface PollPeriods {
  /** ListNamespaces + ListServices. */
  slowMs: number;
  /**
   * DiscoverInstancesRevision per service the change feed does not vouch for (all of them
   * when the feed is off).
   */
  fastMs: number;
  /**
   * DiscoverInstancesRevision of the change feed service (ADR 0018): the fast round's period.
   * Absent or 0: no feed, every service is checked at `fastMs`.
   */
  feedMs?: number;
  /** DiscoverInstancesRevision of each namespace's heartbeat service (default `fastMs`). */
  heartbeatMs?: number;
  /**
   * The backstop: every service is read again (DiscoverInstances, regardless of revision)
   * within this period, one service at a time, oldest read first (refreshIntervalFor).
   */
  resyncMs: number;
  /**
   * At most this many backstop reads a minute: more services stretch the backstop's period
   * instead of raising idle cost (absent or 0: no limit).
   */
  resyncBudgetPerMinute?: number;
  /**
   * With the change feed on, the listing (ListNamespaces + ListServices pages) is stretched
   * so it makes at most this many calls a minute (absent or 0: every `slowMs`).
   */
  listingBudgetPerMinute?: number;
  /** Fraction of a period added at random (0.1 = up to +10 %), so replicas and clusters spread out. */
  jitter: number;
  /** Ceiling of the error backoff. */
  maxBackoffMs: number;
}

/**
 * The fast period stretched so `services` revision calls per round stay within
 * `budgetPerSecond` (an account-wide share of DiscoverInstancesRevision's 3,000/s that this
 * agent may use); undefined budget means no stretching.
 */
export function fastPeriodFor(
  periods: PollPeriods,
  services: number,
  budgetPerSecond?: number,
): number {
  if (budgetPerSecond === undefined || budgetPerSecond <= 0) return periods.fastMs;
  return Math.max(periods.fastMs, Math.ceil((services / budgetPerSecond) * 1000));
}

/** `base` plus up to `jitter` of it, from a random number in [0, 1). */
export function withJitter(base: number, jitter: number, random: number): number {
  return Math.round(base * (1 + Math.max(0, jitter) * random));
}

/** Doubling backoff after `failures` consecutive failed rounds, capped; 0 failures → `base`. */
export function backoff(base: number, failures: number, maxMs: number): number {
  if (failures <= 0) return base;
  return Math.min(maxMs, base * 2 ** Math.min(failures, 20));
}

/**
 * The interval between two backstop reads (one service each): the resync period spread over
 * the services, but never more reads a minute than the budget. 100 services, 1 h, budget 3:
 * one read every 36 s; 1,000 services: one every 20 s, every service within 5.6 h.
 */
export function refreshIntervalFor(periods: PollPeriods, services: number): number {
  const spread = periods.resyncMs / Math.max(1, services);
  const budget = periods.resyncBudgetPerMinute ?? 0;
  return Math.ceil(budget > 0 ? Math.max(spread, 60_000 / budget) : spread);
}

/**
 * The listing's period: `slowMs`, stretched so a listing of `calls` calls stays within the
 * budget once some namespace needs more than one ListServices page (1,000 services in one
 * namespace: 11 calls, at 3 a minute every 220 s). A listing of one page per namespace, what
 * the slow period (IMPORT_TIMINGS.pollSlowSeconds) was chosen for, is never stretched.
 */
export function listingPeriodFor(periods: PollPeriods, calls: number, paged: boolean): number {
  const budget = periods.listingBudgetPerMinute ?? 0;
  if (budget <= 0 || !paged) return periods.slowMs;
  return Math.max(periods.slowMs, Math.ceil((calls / budget) * 60_000));
}
