import type { CloudMapError } from '../ports/cloudmap-port.js';
import { isThrottlingCode, type CloudMapOperationName } from '../ports/operations.js';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../workqueue/clock.js';
import { fullJitterDelay, sleep } from '../workqueue/backoff.js';
import type { CloudMapMetrics } from './metrics.js';
import type { OperationLimiter } from './rate-limits.js';
import { toCloudMapError } from './sdk-errors.js';

export interface RetryPolicy {
  /** Attempts per call including the first. Default 6. */
  maxAttempts: number;
  /** Full-jitter base for transient errors (5xx, network). Default 100 ms. */
  baseDelayMs: number;
  /** Full-jitter base after a throttle: back off harder. Default 500 ms. */
  throttleBaseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 100,
  throttleBaseDelayMs: 500,
  maxDelayMs: 20_000,
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

/** How the client calls the port: each attempt rate limited and measured, retries with full jitter. */
export interface Caller {
  /** One attempt under the operation's limit, counted by outcome; errors as CloudMapError. */
  attempt<T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T>;
  /** Attempts until success, a non-retryable error, the attempt budget or close (ADR 0005). */
  call<T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T>;
}

export function createCaller(o: CallerOptions): Caller {
  const attempt = <T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> =>
    o.limiter.schedule(op, async () => {
      const started = performance.now();
      try {
        const result = await fn();
        o.metrics.call(op, 'success', (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        const e = toCloudMapError(error, op);
        o.metrics.call(op, e.code, (performance.now() - started) / 1000);
        if (isThrottlingCode(e.code)) o.metrics.throttled(op);
        throw e;
      }
    });

  const backoff = async (op: CloudMapOperationName, n: number, e: CloudMapError): Promise<void> => {
    const base = isThrottlingCode(e.code) ? o.retry.throttleBaseDelayMs : o.retry.baseDelayMs;
    const delay = fullJitterDelay(
      n,
      { baseDelayMs: base, maxDelayMs: o.retry.maxDelayMs },
      o.random,
    );
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
    attempt,
    async call(op, fn) {
      for (let n = 1; ; n++) {
        try {
          return await attempt(op, fn);
        } catch (error) {
          const e = error as CloudMapError;
          if (!e.retryable || n >= o.retry.maxAttempts || o.signal.aborted) throw e;
          await backoff(op, n, e);
        }
      }
    },
  };
}
