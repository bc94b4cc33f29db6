import { Counter, Histogram, type Registry } from 'prom-client';
import type { Clock } from './clock.js';
import type { ReconcileOutcome } from './controller.js';
import {
  createQueueMetricsProvider,
  noopQueueMetrics,
  type QueueMetrics,
} from './queue-metrics.js';

/**
 * What the controller harness reports. One instance per process (per registry), shared by
 * every controller in it, so both agents publish the same families: the reconciles as
 * `mcs_reconcile_*{controller}` (docs/contributing.md#config-and-logs: one metric naming
 * scheme), the work queues as client-go's `workqueue_*{name}` (queue-metrics.ts).
 */
export interface ControllerMetrics {
  reconciled(controller: string, result: ReconcileOutcome, seconds: number): void;
  /** The work-queue recorder of the controller `name` (its queue has the same name). */
  queue<K>(name: string, clock: Clock): QueueMetrics<K>;
}

export const noopControllerMetrics: ControllerMetrics = {
  reconciled: () => {},
  queue: <K>() => noopQueueMetrics as QueueMetrics<K>,
};

/**
 * The prom-client families of the harness in `registry`. prom-client keeps its state in
 * memory and does no I/O, so it is allowed in the pure core (the lint rule bans only the
 * Kubernetes and AWS clients).
 */
export function createControllerMetrics(registry: Registry): ControllerMetrics {
  const registers = [registry];
  const reconciles = new Counter({
    name: 'mcs_reconcile_total',
    help: 'Reconciles by controller and result (success, requeue, error, terminal).',
    labelNames: ['controller', 'result'],
    registers,
  });
  const duration = new Histogram({
    name: 'mcs_reconcile_duration_seconds',
    help: 'Reconcile duration by controller.',
    labelNames: ['controller'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const queues = createQueueMetricsProvider(registry);
  return {
    reconciled(controller, result, seconds) {
      reconciles.inc({ controller, result });
      duration.observe({ controller }, seconds);
    },
    queue: queues,
  };
}
