import type { Clock } from './clock.js';

export interface BackoffPolicy {
  /** The delay cap of the first retry; doubles per attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * "Full jitter" (AWS Architecture Blog, Exponential Backoff And Jitter): a uniform delay in
 * [0, min(max, base·2^(attempt-1))). It spreads retries of many clients that failed together,
 * which matters here because Cloud Map throttles per account, across every cluster.
 * `attempt` is the 1-based retry number; `random` returns [0, 1).
 */
export function fullJitterDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * cappedExponential(attempt, policy));
}

/** The upper bound of `fullJitterDelay` for an attempt: min(max, base·2^(attempt-1)). */
export function cappedExponential(attempt: number, policy: BackoffPolicy): number {
  const exp = policy.baseDelayMs * 2 ** Math.max(0, Math.min(attempt - 1, 52));
  return Math.min(policy.maxDelayMs, exp);
}

/** Thrown by `sleep` when its signal aborts. */
export class SleepAbortedError extends Error {
  override readonly name = 'SleepAbortedError';
}

/**
 * `work`, or a rejection with `reason()` (default: the signal's reason) as soon as `signal`
 * aborts. The listener is removed once `work` settles, so a long-lived signal does not keep
 * every call's result reachable (docs/adr/0016-agent-memory.md, decision 14).
 */
export function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal,
  reason: () => unknown = () => signal.reason,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reason() as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    // Removed before the caller resumes: once it has its answer nothing refers to the call.
    const settle =
      <A>(then: (a: A) => void) =>
      (a: A): void => {
        signal.removeEventListener('abort', onAbort);
        then(a);
      };
    work.then(settle(resolve), settle(reject));
  });
}

/** Waits on the injected clock (FakeClock in tests); rejects early if `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new SleepAbortedError('sleep aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(new SleepAbortedError('sleep aborted', { cause: signal?.reason }));
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
