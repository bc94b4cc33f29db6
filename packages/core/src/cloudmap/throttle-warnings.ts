import type { CloudMapOperationName } from '../ports/operations.js';

/**
 * Cloud Map's documented account-wide rate quotas (per account and Region), by the port
 * operation that spends them. Only the two data-plane calls have published figures; the
 * control-plane calls share an unpublished API rate.
 */
const RATE_QUOTAS: Partial<Record<CloudMapOperationName, string>> = {
  discoverInstances:
    'the account-wide DiscoverInstances quota (1,000 requests/s steady, 2,000 burst, per account and Region)',
  discoverInstancesRevision:
    'the account-wide DiscoverInstancesRevision quota (3,000 requests/s per account and Region)',
};

/**
 * What a throttled call says to the operator: the quota it spent and what to ask AWS for.
 * Every cluster of a clusterset (and anything else in the account) shares these budgets, so a
 * throttle here is usually the sum of many callers, not this agent alone.
 */
export function throttleAdvice(op: CloudMapOperationName): string {
  const quota = RATE_QUOTAS[op];
  // The API's own name (DiscoverInstances), as Service Quotas and the AWS docs spell it.
  const api = `${op.charAt(0).toUpperCase()}${op.slice(1)}`;
  if (quota === undefined)
    return `Cloud Map throttled ${api} (an account-wide API rate shared by every caller in the account and Region); calls are retried with backoff. If it persists, ask AWS Support to raise the ${api} request rate for this account.`;
  return `Cloud Map throttled ${api}: ${quota} is spent by every caller in the account; calls are retried with backoff. If it persists, request a higher ${api} rate in Service Quotas (AWS Cloud Map) for this account and Region, or lower the agents' poll rate.`;
}

/**
 * Decides when a throttle is logged: the first of each operation, then at most once per
 * `intervalMs` with the count of those not logged since, so a long throttling period yields
 * a few lines rather than one per call (the metric mcs_cloudmap_throttles_total counts all).
 */
export class ThrottleWarnings {
  readonly #last = new Map<CloudMapOperationName, { at: number; suppressed: number }>();

  constructor(readonly intervalMs = 60_000) {}

  /** The number of throttles not logged since the last line, or undefined: stay quiet. */
  note(op: CloudMapOperationName, nowMs: number): number | undefined {
    const last = this.#last.get(op);
    if (last !== undefined && nowMs - last.at < this.intervalMs) {
      last.suppressed += 1;
      return undefined;
    }
    this.#last.set(op, { at: nowMs, suppressed: 0 });
    return last?.suppressed ?? 0;
  }
}
