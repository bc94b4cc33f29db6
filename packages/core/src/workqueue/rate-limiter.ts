import type { Clock } from './clock.js';

/** Decides how long a key waits before its next attempt (client-go `workqueue.RateLimiter`). */
export interface RateLimiter<K> {
  /** Delay in ms before `key` may be retried; counts as one failure of `key`. */
  when(key: K): number;
  /** Clears the failure history of `key` (call on success). */
  forget(key: K): void;
  /** Failures recorded for `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

export interface ExponentialBackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Per-key exponential backoff: base * 2^failures, capped. */
export function exponentialBackoffLimiter<K>(opts: ExponentialBackoffOptions): RateLimiter<K> {
  const failures = new Map<K, number>();
  return {
    when(key) {
      const n = failures.get(key) ?? 0;
      failures.set(key, n + 1);
      const delay = opts.baseDelayMs * 2 ** n;
      return Number.isFinite(delay) ? Math.min(delay, opts.maxDelayMs) : opts.maxDelayMs;
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues(key) {
      return failures.get(key) ?? 0;
    },
  };
}

export interface TokenBucketOptions {
  /** Sustained rate in tokens per second. */
  ratePerSecond: number;
  /** Bucket size: how many retries may go at once. */
  burst: number;
}

/**
 * An overall limit shared by all keys: each `when` reserves a token and returns how long
 * to wait for it (like golang.org/x/time/rate Reserve().Delay()).
 */
export function tokenBucketLimiter<K>(opts: TokenBucketOptions, clock: Clock): RateLimiter<K> {
  if (opts.ratePerSecond <= 0 || opts.burst < 1) {
    throw new RangeError('token bucket needs ratePerSecond > 0 and burst >= 1');
  }
  let tokens = opts.burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      tokens = Math.min(opts.burst, tokens + ((now - last) * opts.ratePerSecond) / 1000);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens * 1000) / opts.ratePerSecond;
    },
    forget() {},
    numRequeues() {
      return 0;
    },
  };
}

/** The longest delay of several limiters; failures are counted by the worst of them. */
export function maxOfLimiters<K>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  return {
    when(key) {
      return Math.max(0, ...limiters.map((l) => l.when(key)));
    },
    forget(key) {
      for (const l of limiters) l.forget(key);
    },
    numRequeues(key) {
      return Math.max(0, ...limiters.map((l) => l.numRequeues(key)));
    },
  };
}

/** client-go's default controller limiter: 5ms..1000s per key, and 10 qps / burst 100 overall. */
export function defaultControllerRateLimiter<K>(clock: Clock): RateLimiter<K> {
  return maxOfLimiters<K>(
    exponentialBackoffLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    tokenBucketLimiter({ ratePerSecond: 10, burst: 100 }, clock),
  );
}
