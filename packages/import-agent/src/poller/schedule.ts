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
  /** DiscoverInstances of every service regardless of revision (backstop). */
  resyncMs: number;
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
