import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ControllerHooks, ReconcileOutcome } from '../workqueue/controller.js';

/** Prometheus metrics for work queues, reconciles, informers and leadership (DESIGN.md §6). */
export interface ControllerMetrics {
  /** Hooks for one controller: pass `onDepthChange` to createWorkQueue, the rest to runWorkers. */
  forController<K>(controller: string): Required<Pick<ControllerHooks<K>, 'onResult'>> & {
    onDepthChange: (depth: number) => void;
  };
  informerRestart(informer: string, reason: string): void;
  setLeader(leading: boolean): void;
}

export function createControllerMetrics(registry: Registry, prefix = 'mcs_'): ControllerMetrics {
  const registers = [registry];
  const depth = new Gauge({
    name: `${prefix}workqueue_depth`,
    help: 'Keys waiting in the work queue.',
    labelNames: ['controller'],
    registers,
  });
  const reconciles = new Counter({
    name: `${prefix}reconcile_total`,
    help: 'Reconciles by controller and outcome (success, requeue, error, terminal).',
    labelNames: ['controller', 'outcome'],
    registers,
  });
  const duration = new Histogram({
    name: `${prefix}reconcile_duration_seconds`,
    help: 'Reconcile duration by controller.',
    labelNames: ['controller'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
    registers,
  });
  const restarts = new Counter({
    name: `${prefix}informer_restarts_total`,
    help: 'Informer restarts by informer and reason (error, watchdog).',
    labelNames: ['informer', 'reason'],
    registers,
  });
  const leader = new Gauge({
    name: `${prefix}leader`,
    help: '1 while this replica holds the leader Lease.',
    registers,
  });
  return {
    forController: (controller) => ({
      onDepthChange: (d: number) => depth.set({ controller }, d),
      onResult: (_key: unknown, outcome: ReconcileOutcome, ms: number) => {
        reconciles.inc({ controller, outcome });
        duration.observe({ controller }, ms / 1000);
      },
    }),
    informerRestart: (informer, reason) => restarts.inc({ informer, reason }),
    setLeader: (leading) => leader.set(leading ? 1 : 0),
  };
}
