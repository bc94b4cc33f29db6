import type { CloudMapOperationName } from '../ports/operations.js';
import { realClock, type Clock, type TimerHandle } from '../workqueue/clock.js';
import { defaultRateLimits, type OperationLimiter, type RateLimit } from './rate-limits.js';

/** A call dropped from the queue because the limiter was stopped (shutdown). */
export class LimiterStoppedError extends Error {
  override readonly name = 'LimiterStoppedError';
}

interface Waiting {
  run: () => void;
  reject: (e: unknown) => void;
}

interface Bucket {
  limit: RateLimit;
  tokens: number;
  refilledAt: number;
  inFlight: number;
  queue: Waiting[];
  timer?: TimerHandle;
}

/**
 * A token bucket per operation (burst, refill per second, optional concurrency cap), FIFO,
 * on the injected clock. This is the client's default limiter: bottleneck 2.19.5 yields with
 * setTimeout(0) several times per job, which measured 6–7 ms per call and about 250 calls/s
 * per limiter here, below our own 300/s default for DiscoverInstancesRevision (ADR 0005).
 * Calls that find a token run synchronously, with no timer at all.
 */
export function createTokenBucketLimiter(
  overrides: Partial<Record<CloudMapOperationName, RateLimit>> = {},
  clock: Clock = realClock,
): OperationLimiter {
  const buckets = new Map<CloudMapOperationName, Bucket>();
  let stopped = false;
  // Fail at start-up on a bad --cloudmap-rate-limits, not at the first call.
  for (const [op, limit] of Object.entries(overrides))
    if (!(limit.perSecond > 0) || !(limit.burst >= 1))
      throw new RangeError(`invalid rate limit for ${op}: ${JSON.stringify(limit)}`);

  const bucket = (op: CloudMapOperationName): Bucket => {
    let b = buckets.get(op);
    if (b === undefined) {
      const limit = overrides[op] ?? defaultRateLimits[op];
      b = { limit, tokens: limit.burst, refilledAt: clock.now(), inFlight: 0, queue: [] };
      buckets.set(op, b);
    }
    return b;
  };
  const refill = (b: Bucket): void => {
    const now = clock.now();
    b.tokens = Math.min(
      b.limit.burst,
      b.tokens + ((now - b.refilledAt) * b.limit.perSecond) / 1000,
    );
    b.refilledAt = now;
  };
  const pump = (b: Bucket): void => {
    if (b.timer !== undefined) {
      clock.clearTimer(b.timer);
      delete b.timer;
    }
    refill(b);
    while (
      b.queue.length > 0 &&
      b.tokens >= 1 &&
      b.inFlight < (b.limit.maxConcurrent ?? Infinity)
    ) {
      b.tokens -= 1;
      b.queue.shift()?.run();
    }
    // Wake when the next token is due; a full concurrency cap is woken by a finishing call.
    if (b.queue.length > 0 && b.tokens < 1 && !stopped) {
      const waitMs = Math.ceil(((1 - b.tokens) * 1000) / b.limit.perSecond);
      b.timer = clock.setTimer(() => {
        delete b.timer;
        pump(b);
      }, waitMs);
    }
  };

  return {
    schedule<T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> {
      if (stopped) return Promise.reject(new LimiterStoppedError(`limiter stopped: ${op}`));
      const b = bucket(op);
      return new Promise<T>((resolve, reject) => {
        const run = (): void => {
          b.inFlight += 1;
          fn()
            .then(resolve, reject)
            .finally(() => {
              b.inFlight -= 1;
              if (b.queue.length > 0) pump(b);
            });
        };
        b.queue.push({ run, reject });
        pump(b);
      });
    },
    queued: (op) => buckets.get(op)?.queue.length ?? 0,
    async stop() {
      stopped = true;
      for (const b of buckets.values()) {
        if (b.timer !== undefined) clock.clearTimer(b.timer);
        for (const w of b.queue.splice(0)) w.reject(new LimiterStoppedError('limiter stopped'));
      }
    },
  };
}
