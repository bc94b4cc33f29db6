import type {
  CloudMapPort,
  Clock,
  ClusterExport,
  ControllerMetrics,
  WorkQueue,
} from '@cloudmap-mcs/core';
import type { Poller, PollerMetrics } from './poller/poller.js';
import type { PollPeriods } from './poller/schedule.js';
import type { SnapshotHealth } from './poller/snapshot.js';
import type { ImportMetrics, ImportReconcilerDeps } from './reconcile/reconciler.js';

/** The reconciler's deps (declared and documented there) but what the controller makes. */
export interface ImportControllerOptions extends Omit<
  ImportReconcilerDeps,
  'snapshot' | 'recent' | 'refusals' | 'externalExport'
> {
  cloudMap: CloudMapPort;
  clock: Clock;
  periods: PollPeriods;
  requestBudgetPerSecond?: number | undefined;
  workers: number;
  /**
   * User-selected non-Kubernetes Cloud Map services (external/, ADR 0014), made with the
   * controller's snapshot (MCS exports of the clusterset win).
   */
  external?: (snapshot: Pick<Poller, 'get'>) => ExternalExports;
  metrics?: ImportMetrics &
    PollerMetrics & {
      health?(health: SnapshotHealth, synced: boolean): void;
    };
  /** The process's controller metrics (`mcs_reconcile_*{controller="serviceimport"}`). */
  controllerMetrics?: ControllerMetrics;
}

export interface ExternalExports {
  exportFor(namespace: string, name: string): ClusterExport | undefined;
  keys(): string[];
}

export interface ImportController {
  readonly poller: Poller;
  readonly queue: WorkQueue<string>;
  /**
   * Resolves once the first snapshot is complete and workers run; `signal` (leadership)
   * stops the workers when it aborts.
   */
  start(signal?: AbortSignal): Promise<void>;
  /**
   * The keys of a namespace that appeared or went away locally, once Cloud Map was read
   * again (services that appear in it later are named by the change feed or the listing).
   */
  namespaceKeys(namespace: string): Promise<string[]>;
  /** Every import: what is trusted changed (e.g. the local addresses). */
  allKeys(): string[];
  /** Reconcile the key; dropped before the first snapshot (the start replays every key). */
  enqueue(key: string): void;
  stop(): Promise<void>;
}
