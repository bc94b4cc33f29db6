import type { Clock, CloudMapPort, ControllerMetrics, WorkQueue } from '@cloudmap-mcs/core';
import type { CloudMapClient } from '@cloudmap-mcs/core/cloudmap';
import type { DnsOptions } from './cloudmap-target.js';
import type { ExportMetrics } from './metrics.js';
import type { ExportReconciler } from './reconciler.js';
import type { ExportReconcilerDeps } from './reconciler-state.js';

/** What the reconciler takes as given is declared (and documented) there. */
type PassedToReconciler =
  'sources' | 'writer' | 'logger' | 'resyncMs' | 'pendingRequeueMs' | 'podLabelAttributes';

export interface ExportControllerOptions extends Pick<ExportReconcilerDeps, PassedToReconciler> {
  /**
   * The agent's Cloud Map client: a finished operation of its tracker ends its pending write
   * and requeues its key; the peer watch drops its cached reads of a service that changed.
   */
  cloudMap: CloudMapPort & Pick<CloudMapClient, 'operations' | 'invalidateDiscover'>;
  clock: Clock;
  /** Wall time in ms since the epoch (status timestamps, heartbeats). */
  wallNow: () => number;
  workers: number;
  /**
   * Cloud Map calls a minute the resync reconciles and the peer watch's instance counts may
   * use (half each); more exports stretch their periods (0/absent: no limit).
   */
  backgroundBudgetPerMinute?: number;
  heartbeatPeriodMs: number;
  /**
   * The peer watch's round (peer-watch.ts): the change feed's revision, plus the revision of
   * each exported service with records of clusters that do not write the feed; 0 turns it off.
   */
  peerCheckMs: number;
  /** At most this many per-service revision checks per second; more stretch the period. */
  peerCheckBudgetPerSecond: number;
  /**
   * The clusterset change feed (ADR 0018): this cluster's feed instance is written at most
   * once per `minIntervalMs` after its records change. Absent: no feed (importers fall back to
   * per-service revision checks for this cluster's services).
   */
  feed?: { minIntervalMs: number };
  tags: Record<string, string>;
  /** DNS namespaces (ADR 0010); absent: HTTP namespaces, services without DnsConfig. */
  dns?: DnsOptions;
  /** The process's controller metrics (`mcs_reconcile_*{controller="serviceexport"}`). */
  metrics?: ControllerMetrics;
  /** The agent's own metrics (exports, heartbeats, peer watch, feed writes; metrics.ts). */
  exportMetrics?: ExportMetrics | undefined;
}

export interface ExportController {
  readonly queue: WorkQueue<string>;
  readonly reconciler: ExportReconciler;
  enqueue(key: string): void;
  /**
   * Sweeps Cloud Map for orphans, enqueues every key, runs workers and heartbeats until `stop`.
   * `signal` (leadership) stops the workers when it aborts.
   */
  run(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}
