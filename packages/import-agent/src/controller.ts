import {
  createController,
  createRefusalLog,
  logFields,
  type CloudMapPort,
  type Clock,
  type ClusterExport,
  type Controller,
  type ControllerMetrics,
  type EventRecorder,
  type Logger,
  type RefusalLog,
  type TrustPolicy,
  type WorkQueue,
} from '@cloudmap-mcs/core';
import {
  createPoller,
  type Poller,
  type PollerMetrics,
  type PollerOptions,
} from './poller/poller.js';
import { createLivenessTracker, type LivenessTracker } from './liveness-tracker.js';
import type { PollPeriods } from './poller/schedule.js';
import type { SnapshotHealth } from './poller/snapshot.js';
import type { ImportSources, ImportWriter } from './reconcile/ports.js';
import {
  createImportReconciler,
  type ImportMetrics,
  type ImportReconcilerDeps,
} from './reconcile/reconciler.js';
import {
  defaultNamespacePolicy,
  namespaceDecision,
  type ImportCaps,
  type NamespacePolicy,
} from './reconcile/scope.js';

/**
 * Wires the poller, the work queue and the reconciler (docs/contributing.md#reconcile-shape). Workers start only
 * after the first complete Cloud Map snapshot (and, by the caller, after the informer caches
 * synced), then every managed ServiceImport is replayed so deletes missed while down happen.
 */
export interface ImportControllerOptions {
  cloudMap: CloudMapPort;
  sources: ImportSources;
  writer: ImportWriter;
  clock: Clock;
  logger: Logger;
  trust: TrustPolicy;
  periods: PollPeriods;
  requestBudgetPerSecond?: number;
  heartbeatTtlMs: number;
  workers: number;
  now: () => number;
  maxEndpointsPerSlice?: number;
  /** Warning Events (name collisions); none when absent. */
  events?: EventRecorder;
  /** Where imports may be created; default: all but kube-system, kube-public, kube-node-lease, default. */
  namespaces?: NamespacePolicy;
  /** Caps on imports per namespace and per agent. */
  caps?: ImportCaps;
  /** User-selected non-Kubernetes Cloud Map services (external/, ADR 0014). */
  external?: {
    exportFor(namespace: string, name: string): ClusterExport | undefined;
    keys(): string[];
  };
  metrics?: ImportMetrics &
    PollerMetrics & {
      health?(health: SnapshotHealth, synced: boolean): void;
    };
  /** The process's controller metrics (`mcs_reconcile_*{controller="serviceimport"}`). */
  controllerMetrics?: ControllerMetrics;
}

export interface ImportController {
  readonly poller: Poller;
  readonly queue: WorkQueue<string>;
  /**
   * Resolves once the first snapshot is complete and workers run; `signal` (leadership)
   * stops the workers when it aborts.
   */
  start(signal?: AbortSignal): Promise<void>;
  /** A namespace appeared or went away locally. */
  namespaceChanged(namespace: string): void;
  /** An owned object changed or was deleted behind our back: reconcile its import. */
  enqueue(key: string): void;
  /** What is trusted changed (e.g. the local addresses): reconcile every import. */
  enqueueAll(): void;
  stop(): Promise<void>;
}

/** The controller's moving parts, shared by the steps below. */
interface ImportWiring {
  readonly opts: ImportControllerOptions;
  readonly log: Logger;
  readonly controller: Controller<string>;
  readonly queue: WorkQueue<string>;
  readonly poller: Poller;
  /** Whether the workers run (the first snapshot is complete). */
  started: boolean;
  /** Which clusters were live per namespace when its imports last all re-ran. */
  readonly liveness: LivenessTracker;
  workers?: Promise<void>;
  syncWaiter?: { resolve: () => void; timer?: ReturnType<Clock['setTimer']> };
}

export function createImportController(opts: ImportControllerOptions): ImportController {
  const log = opts.logger.child({ [logFields.controller]: 'serviceimport' });
  const controller = createController<string>({
    name: 'serviceimport',
    reconcile: (key, ctx) => reconcile(key, ctx),
    workers: opts.workers,
    clock: opts.clock,
    logger: opts.logger,
    ...(opts.controllerMetrics === undefined ? {} : { metrics: opts.controllerMetrics }),
  });
  const policy = opts.namespaces ?? defaultNamespacePolicy;
  // One refusal log for the poller's scope and the reconciler: one metric, one rate limit.
  const refusals = createRefusalLog({
    logger: opts.logger,
    clock: opts.clock,
    message: 'refused cloud map record',
    ...(opts.metrics?.refused === undefined ? {} : { count: opts.metrics.refused }),
  });
  const w: ImportWiring = {
    opts,
    log,
    controller,
    queue: controller.queue,
    // The poller's callbacks reach `w` only once it is running.
    poller: createPoller(pollerOptions(opts, () => w, inScope(opts, policy, refusals))),
    started: false,
    liveness: createLivenessTracker({
      clustersetId: opts.trust.clustersetId,
      ttlMs: opts.heartbeatTtlMs,
      clock: opts.clock,
      now: opts.now,
      heartbeatService: (ns) => w.poller.heartbeatService(ns),
      onChange: (ns) => enqueueNamespace(w, ns),
      refusals,
    }),
  };
  const reconcile = createImportReconciler(reconcilerOptions(opts, w.poller, policy, refusals));
  return {
    poller: w.poller,
    queue: w.queue,
    start: (signal) => start(w, signal),
    namespaceChanged(namespace) {
      // Services that appear in it later are named by the change feed (or found by the listing).
      void w.poller.refreshNow().then(() => {
        if (w.started) enqueueNamespace(w, namespace);
      });
    },
    enqueue(key) {
      if (w.started) w.queue.add(key);
    },
    enqueueAll() {
      if (!w.started) return;
      for (const key of opts.sources.managedImportKeys()) w.queue.add(key);
      for (const key of allSnapshotKeys(w.poller)) w.queue.add(key);
    },
    stop: () => stop(w),
  };
}

/** A local namespace the policy allows: only those are polled (no Cloud Map calls for the rest). */
function inScope(
  opts: ImportControllerOptions,
  policy: NamespacePolicy,
  refusals: RefusalLog,
): (ns: string) => boolean {
  return (ns) => {
    if (!opts.sources.namespaceExists(ns)) return false;
    const decision = namespaceDecision(policy, ns);
    if (decision.allowed) return true;
    refusals.refused({ reason: 'namespace-denied', subject: ns, fields: { detail: decision.why } });
    return false;
  };
}

function pollerOptions(
  opts: ImportControllerOptions,
  wiring: () => ImportWiring,
  isLocalNamespace: (ns: string) => boolean,
): PollerOptions {
  return {
    port: opts.cloudMap,
    clock: opts.clock,
    now: opts.now,
    logger: opts.logger,
    clustersetId: opts.trust.clustersetId,
    periods: opts.periods,
    heartbeatTtlMs: opts.heartbeatTtlMs,
    ...(opts.requestBudgetPerSecond === undefined
      ? {}
      : { requestBudgetPerSecond: opts.requestBudgetPerSecond }),
    isLocalNamespace,
    onServiceChange: (ns, name) => {
      const w = wiring();
      if (w.started) w.queue.add(`${ns}/${name}`);
    },
    onHeartbeatChange: (ns) => {
      const w = wiring();
      if (w.started) w.liveness.observe(ns);
    },
    onHealthChange: (health, synced) => {
      opts.metrics?.health?.(health, synced);
      // Ready conditions mention reachability: re-evaluate every import we manage.
      const w = wiring();
      if (w.started) for (const key of opts.sources.managedImportKeys()) w.queue.add(key);
    },
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
  };
}

function reconcilerOptions(
  opts: ImportControllerOptions,
  poller: Poller,
  policy: NamespacePolicy,
  refusals: RefusalLog,
): ImportReconcilerDeps {
  return {
    clock: opts.clock,
    sources: opts.sources,
    writer: opts.writer,
    snapshot: poller,
    trust: opts.trust,
    heartbeatTtlMs: opts.heartbeatTtlMs,
    now: opts.now,
    logger: opts.logger,
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
    ...(opts.events === undefined ? {} : { events: opts.events }),
    namespaces: policy,
    refusals,
    ...(opts.caps === undefined ? {} : { caps: opts.caps }),
    ...(opts.external === undefined
      ? {}
      : { externalExport: (ns: string, name: string) => opts.external?.exportFor(ns, name) }),
    ...(opts.maxEndpointsPerSlice === undefined
      ? {}
      : { maxEndpointsPerSlice: opts.maxEndpointsPerSlice }),
  };
}

function enqueueNamespace(w: ImportWiring, namespace: string): void {
  for (const s of w.poller.services(namespace)) w.queue.add(`${namespace}/${s.name}`);
  for (const key of w.opts.sources.managedImportKeys())
    if (key.startsWith(`${namespace}/`)) w.queue.add(key);
}

/** Resolves once the poller's first snapshot is complete (checked every 100 ms). */
function waitSynced(w: ImportWiring): Promise<void> {
  return new Promise<void>((resolve) => {
    const check = (): void => {
      if (w.poller.synced) {
        delete w.syncWaiter;
        resolve();
        return;
      }
      w.syncWaiter = { resolve, timer: w.opts.clock.setTimer(check, 100) };
    };
    check();
  });
}

/** Polls, waits for the first snapshot, replays every import and runs the workers. */
async function start(w: ImportWiring, signal?: AbortSignal): Promise<void> {
  const { poller, queue, opts } = w;
  poller.start();
  await waitSynced(w);
  if (queue.shuttingDown) return;
  w.started = true;
  const keys = new Set<string>(opts.sources.managedImportKeys());
  for (const key of keys) queue.add(key);
  // Every service with records of our clusterset, in namespaces that exist here.
  for (const ns of new Set([...keys].map((k) => k.slice(0, k.indexOf('/')))))
    enqueueNamespace(w, ns);
  for (const key of allSnapshotKeys(poller)) queue.add(key);
  for (const key of opts.external?.keys() ?? []) queue.add(key);
  // What every import is first reconciled with: later heartbeat changes and expiries compare
  // with it.
  const nsOf = (key: string): string => key.slice(0, key.indexOf('/'));
  for (const ns of new Set([...keys, ...allSnapshotKeys(poller)].map(nsOf)))
    w.liveness.observe(ns, true);
  w.log.info('import controller started', { keys: queue.length, workers: opts.workers });
  w.workers = w.controller.run(signal);
}

async function stop(w: ImportWiring): Promise<void> {
  if (w.syncWaiter?.timer !== undefined) w.opts.clock.clearTimer(w.syncWaiter.timer);
  w.syncWaiter?.resolve();
  await w.poller.stop();
  w.liveness.stop();
  w.queue.shutdown();
  await w.workers;
}

function allSnapshotKeys(poller: Poller): string[] {
  return poller.allServices().map((s) => `${s.namespace}/${s.name}`);
}
