import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ReconcileOutcome } from './controller.js';

/**
 * What the controller harness reports, labelled by controller name. One instance per
 * process (per registry), shared by every controller in it, so both agents publish the same
 * families: `mcs_<thing>_<unit>{controller=...}` (docs/contributing.md#config-and-logs: one metric
 * naming scheme).
 */
export interface ControllerMetrics {
  reconciled(controller: string, result: ReconcileOutcome, seconds: number): void;
  /** Keys waiting to be handed to a worker. */
  depth(controller: string, depth: number): void;
  /** Keys being reconciled right now. */
  active(controller: string, n: number): void;
  /** A failed reconcile re-added with backoff. */
  retried(controller: string): void;
}

export const noopControllerMetrics: ControllerMetrics = {
  reconciled: () => {},
  depth: () => {},
  active: () => {},
  retried: () => {},
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
  const depth = new Gauge({
    name: 'mcs_workqueue_depth',
    help: 'Keys waiting in the work queue, by controller.',
    labelNames: ['controller'],
    registers,
  });
  const active = new Gauge({
    name: 'mcs_workqueue_active_keys',
    help: 'Keys being reconciled now, by controller.',
    labelNames: ['controller'],
    registers,
  });
  const retries = new Counter({
    name: 'mcs_workqueue_retries_total',
    help: 'Failed reconciles re-added with backoff, by controller.',
    labelNames: ['controller'],
    registers,
  });
  return {
    reconciled(controller, result, seconds) {
      reconciles.inc({ controller, result });
      duration.observe({ controller }, seconds);
    },
    depth: (controller, n) => depth.set({ controller }, n),
    active: (controller, n) => active.set({ controller }, n),
    retried: (controller) => retries.inc({ controller }),
  };
}
