import {
  createController,
  createEventHub,
  splitKey,
  type Controller,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import { createTargetResolver, type TargetResolver } from './cloudmap-target.js';
import { feedWriterFor, heartbeatsFor, peerWatchFor, reconcilerDeps } from './controller-parts.js';
import { findOwnedKeys, retireFeedRecord } from './earlier-runs.js';
import type { FeedWriter } from './feed-writer.js';
import type { Heartbeats } from './heartbeat.js';
import type { PeerWatch } from './peer-watch.js';
import { createPendingWrites, type PendingWrites } from './pending-writes.js';
import { createExportReconciler, type ExportReconciler } from './reconciler.js';

import type { OperationResult } from '@cloudmap-mcs/core/cloudmap';
import type { ExportController, ExportControllerOptions } from './controller-options.js';

export type { ExportController, ExportControllerOptions } from './controller-options.js';

/**
 * Wires the export reconciler to the work queue (docs/contributing.md#reconcile-shape): the
 * agent's watches (watches.ts) call `enqueue`, workers run `reconcile`, a finished Cloud Map
 * operation requeues its key, the heartbeat renews on its own timer. Built in order: parts
 * built first tell later ones through event hubs.
 */
export function createExportController(opts: ExportControllerOptions): ExportController {
  const { clock, logger } = opts;
  const epochWritten = createEventHub<undefined>();
  const exportsChanged = createEventHub<undefined>();
  const peerChanged = createEventHub<string>();
  const reconciled = createEventHub<string>();
  const pending = createPendingWrites();
  const resolver = createTargetResolver({
    cloudMap: opts.cloudMap,
    tags: opts.tags,
    logger,
    now: () => clock.now(),
    dns: opts.dns,
  });
  const peers = opts.peerCheckMs > 0 ? peerWatchFor(opts, peerChanged) : undefined;
  const feed = opts.feed === undefined ? undefined : feedWriterFor(opts, opts.feed, epochWritten);
  const heartbeats = heartbeatsFor(opts, resolver, pending, feed);
  const reconciler = createExportReconciler(
    reconcilerDeps(opts, { resolver, pending, feed, peers }, exportsChanged),
  );
  const controller = createController<string>({
    name: 'serviceexport',
    reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
    workers: opts.workers,
    clock,
    logger,
    metrics: opts.metrics,
    onResult: (key) => reconciled.emit('update', key),
  });
  const { queue } = controller;
  const w: ExportWiring = {
    opts,
    controller,
    pending,
    resolver,
    heartbeats,
    peers,
    feed,
    reconciler,
    unsubscribe: () => {},
    stopped: false,
    beating: Promise.resolve(),
    beatQueued: false,
    feedRetired: false,
    firstPass: new Set(),
  };
  w.unsubscribe = opts.cloudMap.operations.onComplete((r) => operationCompleted(w, r));
  epochWritten.on(() => beat(w));
  exportsChanged.on(() => w.firstPass === undefined && beat(w));
  reconciled.on((_e, key) => {
    firstPassDone(w, key);
    opts.exportMetrics?.exports(reconciler.exportedCount());
  });
  peerChanged.on((_e, key) => {
    opts.exportMetrics?.peerChange();
    queue.add(key);
  });
  return {
    queue,
    reconciler,
    enqueue: (key) => queue.add(key),
    run: (signal) => run(w, signal),
    stop: () => stop(w),
  };
}

/** The controller's moving parts, shared by the steps below. */
interface ExportWiring {
  readonly opts: ExportControllerOptions;
  readonly controller: Controller<string>;
  readonly pending: PendingWrites;
  readonly heartbeats: Heartbeats;
  readonly peers: PeerWatch | undefined;
  readonly feed: FeedWriter | undefined;
  readonly reconciler: ExportReconciler;
  unsubscribe: () => void;
  heartbeatTimer?: TimerHandle;
  stopped: boolean;
  /** The heartbeat renewal running (one at a time). */
  readonly resolver: TargetResolver;
  beating: Promise<void>;
  beatQueued: boolean;
  /** With the feed off: this cluster's feed record (from an earlier run) is gone. */
  feedRetired: boolean;
  /**
   * Keys enqueued at start that have not been reconciled once yet. Until then the exported set
   * is partial: a digest of it would rewrite heartbeats that are in fact current (a restart with
   * nothing changed must write nothing), so export changes move the heartbeat only after it.
   */
  firstPass: Set<string> | undefined;
}

/**
 * Renewals run one at a time; a burst of export changes (a start-up of 100 exports)
 * coalesces into the one sync queued behind the running one, which reads the latest set.
 */
function beat(w: ExportWiring): void {
  if (w.beatQueued) return;
  w.beatQueued = true;
  w.beating = w.beating.then(async () => {
    w.beatQueued = false;
    const settled = w.firstPass === undefined;
    await w.heartbeats.sync(w.reconciler.exportsByNamespace(), { settled });
    // After the heartbeats state no feed: a reader that sees the record go (or a copy of it
    // come back) reads them again and finds nothing vouching for it.
    if (w.feed === undefined && !w.feedRetired && settled)
      w.feedRetired = await retireFeedRecord(
        w.resolver,
        w.opts.cloudMap,
        w.opts.sources.identity(),
        w.opts.logger,
      );
  });
}

function firstPassDone(w: ExportWiring, key: string): void {
  if (w.firstPass === undefined || !w.firstPass.delete(key) || w.firstPass.size > 0) return;
  w.firstPass = undefined;
  beat(w);
}

/** A finished Cloud Map operation: its pending write ends and its key runs again. */
function operationCompleted(w: ExportWiring, r: OperationResult): void {
  if (r.serviceId === undefined || r.instanceId === undefined) return;
  w.pending.complete(r.serviceId, r.instanceId, r.operationId);
  if (!w.stopped && w.heartbeats.takeDeferred()) beat(w);
  if (r.status !== 'SUCCESS') {
    w.opts.logger.warn('cloud map operation failed', {
      operationId: r.operationId,
      operationStatus: r.status,
      instanceId: r.instanceId,
      reason: r.errorCode,
    });
  }
  const key = w.reconciler.keyForService(r.serviceId);
  if (key === undefined) return;
  // Cloud Map applied (or refused) a write of the key's records: only now may the feed
  // name it, so a reader following the feed reads what was written (ADR 0018).
  w.feed?.changed(...splitKey(key));
  w.controller.queue.add(key);
}

function scheduleHeartbeat(w: ExportWiring): void {
  if (w.stopped) return;
  // A third of the period: a heartbeat is never more than 4/3 of a period old.
  w.heartbeatTimer = w.opts.clock.setTimer(() => {
    beat(w);
    scheduleHeartbeat(w);
  }, w.opts.heartbeatPeriodMs / 3);
}

/** Sweeps Cloud Map for orphans, enqueues every key, runs workers and heartbeats. */
async function run(w: ExportWiring, signal?: AbortSignal): Promise<void> {
  const { opts } = w;
  const identity = opts.sources.identity();
  const initial = new Set<string>(opts.sources.serviceExportKeys());
  if (identity !== undefined) {
    for (const key of await findOwnedKeys(opts.cloudMap, identity)) initial.add(key);
  }
  w.firstPass = initial.size === 0 ? undefined : new Set(initial);
  for (const key of initial) w.controller.queue.add(key);
  scheduleHeartbeat(w);
  w.feed?.start();
  w.peers?.start();
  await w.controller.run(signal);
}

async function stop(w: ExportWiring): Promise<void> {
  w.stopped = true;
  if (w.heartbeatTimer !== undefined) w.opts.clock.clearTimer(w.heartbeatTimer);
  w.unsubscribe();
  await w.peers?.stop();
  await w.controller.stop();
  await w.feed?.stop();
  await w.beating;
}
