import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from './clock.js';

/**
 * What a work queue reports, as client-go's `util/workqueue` does (its MetricsProvider): one
 * recorder per queue, told about each key as it moves through the queue.
 */
export interface QueueMetrics<K> {
  /** A key became waiting (not merged into one already waiting). */
  added(key: K): void;
  /** A waiting key was handed to a worker. */
  got(key: K): void;
  /** A worker finished a key. */
  done(key: K): void;
  /** A key was added with a delay (`addAfter`, `addRateLimited`): client-go counts a retry. */
  retried(): void;
}

export const noopQueueMetrics: QueueMetrics<unknown> = {
  added: () => {},
  got: () => {},
  done: () => {},
  retried: () => {},
};

/** Makes the recorder of each named queue of a process. */
export type QueueMetricsProvider = <K>(name: string, clock: Clock) => QueueMetrics<K>;

/** client-go's buckets: 10 ns to 10 s by factors of ten (ExponentialBuckets(10e-9, 10, 10)). */
const BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/**
 * client-go's work-queue families (k8s.io/component-base/metrics/prometheus/workqueue), with
 * the same names, label (`name`: the queue's, which is the controller's) and meaning, so the
 * dashboards and alerts operators already run for controllers apply to the agents:
 * `workqueue_adds_total`, `workqueue_depth`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`. The two
 * in-progress gauges are computed when scraped (client-go updates them every 500 ms).
 */
export function createQueueMetricsProvider(registry: Registry): QueueMetricsProvider {
  const registers = [registry];
  const labelNames = ['name'] as const;
  const queues = new Map<string, { clock: Clock; started: Map<unknown, number> }>();
  const inProgress = (
    reduce: (starts: number[], now: number) => number,
  ): ((this: Gauge<'name'>) => void) =>
    function collect(this: Gauge<'name'>) {
      for (const [name, q] of queues) {
        const now = q.clock.now();
        this.set({ name }, reduce([...q.started.values()], now) / 1000);
      }
    };
  const adds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames,
    registers,
  });
  const depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames,
    registers,
  });
  const queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested.',
    labelNames,
    buckets: BUCKETS,
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames,
    buckets: BUCKETS,
    registers,
  });
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help:
      'How many seconds of work has done that is in progress and hasn’t been observed by ' +
      'work_duration. Large values indicate stuck threads. One can deduce the number of stuck ' +
      'threads by observing the rate at which this increases.',
    labelNames,
    registers,
    collect: inProgress((starts, now) => starts.reduce((sum, s) => sum + (now - s), 0)),
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames,
    registers,
    collect: inProgress((starts, now) => starts.reduce((max, s) => Math.max(max, now - s), 0)),
  });
  const retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames,
    registers,
  });
  return <K>(name: string, clock: Clock): QueueMetrics<K> => {
    const addedAt = new Map<K, number>();
    const started = new Map<K, number>();
    queues.set(name, { clock, started });
    // Present from the start, as client-go's are once a queue exists.
    depth.set({ name }, 0);
    adds.inc({ name }, 0);
    retries.inc({ name }, 0);
    return {
      added(key) {
        adds.inc({ name });
        depth.inc({ name });
        if (!addedAt.has(key)) addedAt.set(key, clock.now());
      },
      got(key) {
        depth.dec({ name });
        const now = clock.now();
        const at = addedAt.get(key);
        if (at !== undefined) queueDuration.observe({ name }, (now - at) / 1000);
        addedAt.delete(key);
        started.set(key, now);
      },
      done(key) {
        const at = started.get(key);
        if (at === undefined) return;
        workDuration.observe({ name }, (clock.now() - at) / 1000);
        started.delete(key);
      },
      retried: () => retries.inc({ name }),
    };
  };
}
