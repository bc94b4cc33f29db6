import {
  createController,
  type Clock,
  type CloudMapPort,
  type ControllerMetrics,
  type Logger,
  type TimerHandle,
  type WorkQueue,
} from '@cloudmap-mcs/core';
import { createTargetResolver, type DnsOptions } from './cloudmap-target.js';
import { createFeedWriter, type FeedWriter, type FeedWriteResult } from './feed-writer.js';
import { createHeartbeats, type Heartbeats } from './heartbeat.js';
import { createPeerWatch, type PeerWatch } from './peer-watch.js';
import { createPendingWrites, type PendingWrites } from './pending-writes.js';
import { createExportReconciler, type ExportReconciler } from './reconciler.js';
import type { ExportSources, ServiceExportWriter } from './sources.js';
import { findOwnedKeys } from './sweep.js';

/** A finished Cloud Map operation, as the client's tracker reports it. */
interface CompletedOperation {
  operationId: string;
  status: string;
  serviceId?: string;
  instanceId?: string;
  errorCode?: string;
}

interface OperationEvents {
  onComplete(listener: (result: CompletedOperation) => void): () => void;
}

export interface ExportControllerOptions {
  sources: ExportSources;
  writer: ServiceExportWriter;
  cloudMap: CloudMapPort;
  operations: OperationEvents;
  clock: Clock;
  /** Wall time in ms since the epoch (status timestamps, heartbeats). */
  wallNow: () => number;
  logger: Logger;
  workers: number;
  resyncMs: number;
  pendingRequeueMs: number;
  heartbeatPeriodMs: number;
  /**
   * The peer watch's round (peer-watch.ts): the change feed's revision, plus the revision of
   * each exported service with records of clusters that do not write the feed; 0 turns it off.
   */
  peerCheckMs: number;
  /** At most this many per-service revision checks per second; more stretch the period. */
  peerCheckBudgetPerSecond: number;
  /** Another cluster changed an exported service (metrics). */
  onPeerChange?: () => void;
  /** Drops the client's cached reads of a service (CloudMapClient.invalidateDiscover). */
  forgetReads?: (namespaceName: string, serviceName: string) => void;
  /**
   * The clusterset change feed (ADR 0018): this cluster's feed instance is written at most
   * once per `minIntervalMs` after its records change. Absent: no feed (importers fall back to
   * per-service revision checks for this cluster's services).
   */
  feed?: { minIntervalMs: number; onWrite?: (result: FeedWriteResult) => void };
  tags: Record<string, string>;
  /** DNS namespaces (ADR 0010); absent: HTTP namespaces, services without DnsConfig. */
  dns?: DnsOptions;
  /** `--pod-label-attributes` (default label keys for pod label attributes). */
  podLabelAttributes?: readonly string[];
  /** The process's controller metrics (`mcs_reconcile_*{controller="serviceexport"}`). */
  metrics?: ControllerMetrics;
  /** After every reconcile (the agent's managed-exports gauge). */
  onReconciled?: () => void;
}

export interface ExportController {
  readonly queue: WorkQueue<string>;
  readonly reconciler: ExportReconciler;
  readonly pending: PendingWrites;
  readonly heartbeats: Heartbeats;
  readonly peers: PeerWatch | undefined;
  readonly feed: FeedWriter | undefined;
  enqueue(key: string): void;
  enqueueAll(): void;
  /** Sweeps Cloud Map for orphans, enqueues every key, runs workers and heartbeats until `stop`. */
  run(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires the export reconciler to the work queue (GUIDE.md rules 1–3): informer callbacks call
 * `enqueue`, workers run `reconcile`, a finished Cloud Map operation requeues its key, and the
 * heartbeat renews on its own timer.
 */
export function createExportController(opts: ExportControllerOptions): ExportController {
  const { clock, logger } = opts;
  const controller = createController<string>({
    name: 'serviceexport',
    reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
    workers: opts.workers,
    clock,
    logger,
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
    onResult: (key) => {
      firstPassDone(key);
      opts.onReconciled?.();
    },
  });
  const queue = controller.queue;
  const pending = createPendingWrites();
  const resolver = createTargetResolver({
    cloudMap: opts.cloudMap,
    tags: opts.tags,
    logger,
    now: () => clock.now(),
    ...(opts.dns === undefined ? {} : { dns: opts.dns }),
  });
  let heartbeatTimer: TimerHandle | undefined;
  let stopped = false;
  const heartbeats = createHeartbeats({
    cloudMap: opts.cloudMap,
    resolver,
    pending,
    identity: () => opts.sources.identity(),
    now: opts.wallNow,
    periodMs: opts.heartbeatPeriodMs,
    logger,
  });
  // Renewals run one at a time; a burst of export changes (a start-up of 100 exports)
  // coalesces into the one sync queued behind the running one, which reads the latest set.
  let beating: Promise<void> = Promise.resolve();
  let beatQueued = false;
  const beat = (): void => {
    if (beatQueued) return;
    beatQueued = true;
    beating = beating.then(() => {
      beatQueued = false;
      return heartbeats.sync(reconciler.exportsByNamespace(), { settled: firstPass === undefined });
    });
  };
  // Keys enqueued at start that have not been reconciled once yet. Until then the exported set
  // is partial: a digest of it would rewrite heartbeats that are in fact current (a restart with
  // nothing changed must write nothing), so export changes move the heartbeat only after it.
  let firstPass: Set<string> | undefined = new Set();
  const firstPassDone = (key: string): void => {
    if (firstPass === undefined || !firstPass.delete(key) || firstPass.size > 0) return;
    firstPass = undefined;
    beat();
  };
  const peers =
    opts.peerCheckMs > 0
      ? createPeerWatch({
          cloudMap: opts.cloudMap,
          clock,
          identity: () => opts.sources.identity(),
          periodMs: opts.peerCheckMs,
          budgetPerSecond: opts.peerCheckBudgetPerSecond,
          logger: logger.child({ component: 'peer-watch' }),
          ...(opts.forgetReads === undefined ? {} : { forget: opts.forgetReads }),
          onChange: (key) => {
            opts.onPeerChange?.();
            queue.add(key);
          },
        })
      : undefined;
  const feed =
    opts.feed === undefined
      ? undefined
      : createFeedWriter({
          cloudMap: opts.cloudMap,
          // Its own resolver: the feed namespace is always HTTP, whatever --dns-records says.
          resolver: createTargetResolver({
            cloudMap: opts.cloudMap,
            tags: opts.tags,
            logger,
            now: () => clock.now(),
          }),
          identity: () => opts.sources.identity(),
          clock,
          now: opts.wallNow,
          logger: logger.child({ component: 'feed-writer' }),
          minIntervalMs: opts.feed.minIntervalMs,
          ...(opts.feed.onWrite === undefined ? {} : { onWrite: opts.feed.onWrite }),
        });
  const announce = (key: string): void => {
    const slash = key.indexOf('/');
    feed?.changed(key.slice(0, slash), key.slice(slash + 1));
  };
  const reconciler = createExportReconciler({
    sources: opts.sources,
    writer: opts.writer,
    cloudMap: opts.cloudMap,
    resolver,
    pending,
    logger,
    now: () => new Date(opts.wallNow()),
    resyncMs: opts.resyncMs,
    pendingRequeueMs: opts.pendingRequeueMs,
    onExportsChanged: () => {
      if (firstPass === undefined) beat();
    },
    ...(feed === undefined ? {} : { onWritesSubmitted: (ns, name) => feed.hint(ns, name) }),
    ...(opts.podLabelAttributes === undefined
      ? {}
      : { podLabelAttributes: opts.podLabelAttributes }),
    ...(peers === undefined ? {} : { peers }),
  });
  const unsubscribe = opts.operations.onComplete((r) => {
    if (r.serviceId === undefined || r.instanceId === undefined) return;
    pending.complete(r.serviceId, r.instanceId, r.operationId);
    if (r.status !== 'SUCCESS') {
      logger.warn('cloud map operation failed', {
        operationId: r.operationId,
        operationStatus: r.status,
        instanceId: r.instanceId,
        reason: r.errorCode,
      });
    }
    const key = reconciler.keyForService(r.serviceId);
    if (key === undefined) return;
    // Cloud Map applied (or refused) a write of the key's records: only now may the feed
    // name it, so a reader following the feed reads what was written (ADR 0018).
    announce(key);
    queue.add(key);
  });
  const scheduleHeartbeat = (): void => {
    if (stopped) return;
    // A third of the period: a heartbeat is never more than 4/3 of a period old.
    heartbeatTimer = clock.setTimer(() => {
      beat();
      scheduleHeartbeat();
    }, opts.heartbeatPeriodMs / 3);
  };

  const enqueueAll = (): void => {
    for (const key of opts.sources.serviceExportKeys()) queue.add(key);
  };

  return {
    queue,
    reconciler,
    pending,
    heartbeats,
    peers,
    feed,
    enqueue: (key) => queue.add(key),
    enqueueAll,
    async run() {
      const identity = opts.sources.identity();
      const initial = new Set<string>(opts.sources.serviceExportKeys());
      if (identity !== undefined) {
        for (const key of await findOwnedKeys(opts.cloudMap, identity)) initial.add(key);
      }
      firstPass = initial.size === 0 ? undefined : new Set(initial);
      for (const key of initial) queue.add(key);
      scheduleHeartbeat();
      feed?.start();
      peers?.start();
      await controller.run();
    },
    async stop() {
      stopped = true;
      if (heartbeatTimer !== undefined) clock.clearTimer(heartbeatTimer);
      unsubscribe();
      await peers?.stop();
      await controller.stop();
      await feed?.stop();
      await beating;
    },
  };
}
