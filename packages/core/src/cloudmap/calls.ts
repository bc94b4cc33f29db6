import type { CloudMapError } from '../ports/cloudmap-port.js';
import { isThrottlingCode, type CloudMapOperationName } from '../ports/operations.js';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../workqueue/clock.js';
import { fullJitterDelay, sleep, untilAborted } from '../workqueue/backoff.js';
import type { CloudMapMetrics } from './metrics.js';
import type { OperationLimiter } from './rate-limits.js';
import { deadlineExceeded, toCloudMapError } from './sdk-errors.js';
import { ThrottleWarnings, throttleAdvice } from './throttle-warnings.js';

export interface RetryPolicy {
  /** Attempts per call including the first. Default 6. */
  maxAttempts: number;
  /** Full-jitter base for transient errors (5xx, network). Default 100 ms. */
  baseDelayMs: number;
  /** Full-jitter base after a throttle: back off harder. Default 500 ms. */
  throttleBaseDelayMs: number;
  maxDelayMs: number;
  /**
   * Every call ends within this, retries included: it starts with the first attempt (time
   * queued behind the rate limit does not count) and aborts the attempt in flight, which drops
   * its connection. Default 10 s: with the SDK's 5 s per-request timeout (sdk-client.ts), a
   * Cloud Map that holds connections open without answering is reported within 15 s.
   */
  deadlineMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 100,
  throttleBaseDelayMs: 500,
  maxDelayMs: 20_000,
  deadlineMs: 10_000,
};

export interface CallerOptions {
  limiter: OperationLimiter;
  metrics: CloudMapMetrics;
  retry: RetryPolicy;
  clock: Clock;
  random: () => number;
  log: Logger;
  /** Aborts retry waits (the client is closing). */
  signal: AbortSignal;
}

/** One port call: `signal` is its deadline, to be passed on to the port (CallOptions). */
export type PortCall<T> = (signal: AbortSignal) => Promise<T>;

/** How the client calls the port: each attempt rate limited and measured, retries with full jitter. */
export interface Caller {
  /**
   * One attempt under the operation's limit, within the call deadline, counted by outcome;
   * errors as CloudMapError.
   */
  attempt<T>(op: CloudMapOperationName, fn: PortCall<T>): Promise<T>;
  /**
   * Attempts until success, a non-retryable error, the attempt budget, the call deadline or
   * close (ADR 0005).
   */
  call<T>(op: CloudMapOperationName, fn: PortCall<T>): Promise<T>;
}

/** One call's deadline on the injected clock, started by its first attempt. */
interface Deadline {
  readonly signal: AbortSignal;
  start(): void;
  remainingMs(): number;
  stop(): void;
}

function deadline(clock: Clock, ms: number, op: CloudMapOperationName): Deadline {
  const controller = new AbortController();
  let endsAt: number | undefined;
  let timer: TimerHandle | undefined;
  return {
    signal: controller.signal,
    start() {
      if (endsAt !== undefined) return;
      endsAt = clock.now() + ms;
      timer = clock.setTimer(() => controller.abort(deadlineExceeded(op, ms)), ms);
    },
    remainingMs: () => (endsAt === undefined ? ms : endsAt - clock.now()),
    stop() {
      if (timer !== undefined) clock.clearTimer(timer);
    },
  };
}

export function createCaller(o: CallerOptions): Caller {
  const warnings = new ThrottleWarnings();
  const attempt = <T>(op: CloudMapOperationName, fn: PortCall<T>, d?: Deadline): Promise<T> =>
    o.limiter.schedule(op, async () => {
      const own = d ?? deadline(o.clock, o.retry.deadlineMs, op);
      own.start();
      const started = performance.now();
      try {
        // A port that ignores the signal (or a body that trickles) cannot hold the caller past it.
        const result = await untilAborted(fn(own.signal), own.signal);
        o.metrics.call(op, 'success', (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        // Past the deadline, whatever the port threw (the SDK's AbortError) is the deadline.
        const e = toCloudMapError(own.signal.aborted ? own.signal.reason : error, op);
        o.metrics.call(op, e.code, (performance.now() - started) / 1000);
        if (isThrottlingCode(e.code)) {
          o.metrics.throttled(op);
          const suppressed = warnings.note(op, o.clock.now());
          if (suppressed !== undefined)
            o.log.warn(throttleAdvice(op), {
              [logFields.cloudMapOperation]: op,
              [logFields.reason]: e.code,
              throttlesNotLogged: suppressed,
            });
        }
        throw e;
      } finally {
        if (d === undefined) own.stop();
      }
    });

  const backoff = async (
    op: CloudMapOperationName,
    n: number,
    e: CloudMapError,
    d: Deadline,
  ): Promise<void> => {
    const base = isThrottlingCode(e.code) ? o.retry.throttleBaseDelayMs : o.retry.baseDelayMs;
    const delay = fullJitterDelay(
      n,
      { baseDelayMs: base, maxDelayMs: o.retry.maxDelayMs },
      o.random,
    );
    // A retry that would start after the deadline could not finish before it.
    if (delay >= d.remainingMs()) throw e;
    o.metrics.retry(op);
    o.log.debug('cloud map call retried', {
      [logFields.cloudMapOperation]: op,
      [logFields.attempt]: n,
      [logFields.delayMs]: delay,
      [logFields.error]: e,
    });
    await sleep(o.clock, delay, o.signal).catch(() => {
      throw e;
    });
  };

  return {
    attempt: (op, fn) => attempt(op, fn),
    async call(op, fn) {
      const d = deadline(o.clock, o.retry.deadlineMs, op);
      try {
        for (let n = 1; ; n++) {
          try {
            return await attempt(op, fn, d);
          } catch (error) {
            const e = error as CloudMapError;
            if (!e.retryable || n >= o.retry.maxAttempts || o.signal.aborted || d.signal.aborted)
              throw e;
            await backoff(op, n, e, d);
          }
        }
      } finally {
        d.stop();
      }
    },
  };
}
