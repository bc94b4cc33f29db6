import type { Clock, TimerHandle } from './clock.js';
import { noopQueueMetrics, type QueueMetrics } from './queue-metrics.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * A work queue of keys with client-go `util/workqueue` semantics:
 * - repeated adds of a waiting key merge into one;
 * - a key is never handed to two workers at once;
 * - a key added while it is being processed is handed out again after `done`;
 * - `addAfter` delays a key (the earliest pending delay wins), `addRateLimited` delays by the
 *   rate limiter (per-key backoff combined with an overall limit), `forget` resets backoff;
 * - `shutdown` stops new adds, lets workers take what is queued, and `drain` waits for the
 *   keys in flight.
 */
export interface WorkQueue<K> {
  add(key: K): void;
  addAfter(key: K, delayMs: number): void;
  addRateLimited(key: K): void;
  forget(key: K): void;
  numRequeues(key: K): number;
  /** Resolves with the next key, or `undefined` once the queue is shut down and empty. */
  get(): Promise<K | undefined>;
  /** Marks the key returned by `get` as finished. */
  done(key: K): void;
  /** Keys waiting to be handed out (not counting delayed or in-flight keys). */
  readonly length: number;
  readonly inFlight: number;
  readonly shuttingDown: boolean;
  /** Stops accepting adds and wakes idle getters; pending delayed adds are dropped. */
  shutdown(): void;
  /** Shuts down and resolves when every queued and in-flight key is done. */
  shutdownAndDrain(): Promise<void>;
}

export interface WorkQueueOptions<K> {
  clock: Clock;
  rateLimiter: RateLimiter<K>;
  /** client-go's work-queue metrics of this queue (queue-metrics.ts). */
  metrics?: QueueMetrics<K>;
}

export function createWorkQueue<K>(opts: WorkQueueOptions<K>): WorkQueue<K> {
  const { clock, rateLimiter } = opts;
  const order: K[] = [];
  const dirty = new Set<K>();
  const processing = new Set<K>();
  const delayed = new Map<K, { due: number; timer: TimerHandle }>();
  const waiters: ((key: K | undefined) => void)[] = [];
  const drainWaiters: (() => void)[] = [];
  let closed = false;
  const metrics = opts.metrics ?? (noopQueueMetrics as QueueMetrics<K>);

  const checkDrained = (): void => {
    if (closed && order.length === 0 && processing.size === 0) {
      for (const resolve of drainWaiters.splice(0)) resolve();
    }
  };

  const handOut = (): void => {
    while (waiters.length > 0 && order.length > 0) {
      const key = order.shift() as K;
      dirty.delete(key);
      processing.add(key);
      metrics.got(key);
      (waiters.shift() as (key: K | undefined) => void)(key);
    }
    if (closed && order.length === 0) {
      for (const resolve of waiters.splice(0)) resolve(undefined);
    }
  };

  const queue: WorkQueue<K> = {
    add(key) {
      if (closed || dirty.has(key)) return;
      dirty.add(key);
      metrics.added(key);
      if (processing.has(key)) return;
      order.push(key);
      handOut();
    },
    addAfter(key, delayMs) {
      if (closed) return;
      metrics.retried();
      if (delayMs <= 0) {
        queue.add(key);
        return;
      }
      const due = clock.now() + delayMs;
      const existing = delayed.get(key);
      if (existing !== undefined) {
        if (existing.due <= due) return;
        clock.clearTimer(existing.timer);
      }
      const timer = clock.setTimer(() => {
        delayed.delete(key);
        queue.add(key);
      }, delayMs);
      delayed.set(key, { due, timer });
    },
    addRateLimited(key) {
      queue.addAfter(key, rateLimiter.when(key));
    },
    forget(key) {
      rateLimiter.forget(key);
    },
    numRequeues(key) {
      return rateLimiter.numRequeues(key);
    },
    get() {
      if (order.length === 0 && closed) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        waiters.push(resolve);
        handOut();
      });
    },
    done(key) {
      if (!processing.delete(key)) return;
      metrics.done(key);
      if (dirty.has(key)) {
        order.push(key);
        handOut();
      }
      checkDrained();
    },
    get length() {
      return order.length;
    },
    get inFlight() {
      return processing.size;
    },
    get shuttingDown() {
      return closed;
    },
    shutdown() {
      if (closed) return;
      closed = true;
      for (const { timer } of delayed.values()) clock.clearTimer(timer);
      delayed.clear();
      handOut();
      checkDrained();
    },
    shutdownAndDrain() {
      const drained = new Promise<void>((resolve) => drainWaiters.push(resolve));
      queue.shutdown();
      checkDrained();
      return drained;
    },
  };
  return queue;
}
