import {
  createController,
  createRefusalLog,
  logFields,
  type CloudMapPort,
  type Clock,
  type ClusterExport,
  type ControllerMetrics,
  type EventRecorder,
  type Logger,
  type TrustPolicy,
  type WorkQueue,
} from '@cloudmap-mcs/core';
import { createPoller, type Poller, type PollerMetrics } from './poller/poller.js';
import type { PollPeriods } from './poller/schedule.js';
import type { SnapshotHealth } from './poller/snapshot.js';
import type { ImportSources, ImportWriter } from './reconcile/ports.js';
import { createImportReconciler, type ImportMetrics } from './reconcile/reconciler.js';
import {
  defaultNamespacePolicy,
  namespaceDecision,
  type ImportCaps,
  type NamespacePolicy,
} from './reconcile/scope.js';

/**
 * Wires the poller, the work queue and the reconciler (GUIDE.md rules 1–3). Workers start only
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
  /** Resolves once the first snapshot is complete and workers run. */
  start(): Promise<void>;
  /** A namespace appeared or went away locally. */
  namespaceChanged(namespace: string): void;
  /** An owned object changed or was deleted behind our back: reconcile its import. */
  enqueue(key: string): void;
  /** What is trusted changed (e.g. the local addresses): reconcile every import. */
  enqueueAll(): void;
  stop(): Promise<void>;
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
  const queue = controller.queue;
  let started = false;
  const policy = opts.namespaces ?? defaultNamespacePolicy;
  // One refusal log for the poller's scope and the reconciler: one metric, one rate limit.
  const refusals = createRefusalLog({
    logger: opts.logger,
    clock: opts.clock,
    message: 'refused cloud map record',
    ...(opts.metrics?.refused === undefined ? {} : { count: opts.metrics.refused }),
  });
  /** A local namespace the policy allows: only those are polled (no Cloud Map calls for the rest). */
  const inScope = (ns: string): boolean => {
    if (!opts.sources.namespaceExists(ns)) return false;
    const decision = namespaceDecision(policy, ns);
    if (decision.allowed) return true;
    refusals.refused({ reason: 'namespace-denied', subject: ns, fields: { detail: decision.why } });
    return false;
  };
  const enqueueNamespace = (namespace: string): void => {
    for (const s of poller.services(namespace)) queue.add(`${namespace}/${s.name}`);
    for (const key of opts.sources.managedImportKeys())
      if (key.startsWith(`${namespace}/`)) queue.add(key);
  };
  const poller = createPoller({
    port: opts.cloudMap,
    clock: opts.clock,
    now: opts.now,
    logger: opts.logger,
    clustersetId: opts.trust.clustersetId,
    periods: opts.periods,
    ...(opts.requestBudgetPerSecond === undefined
      ? {}
      : { requestBudgetPerSecond: opts.requestBudgetPerSecond }),
    isLocalNamespace: inScope,
    onServiceChange: (ns, name) => {
      if (started) queue.add(`${ns}/${name}`);
    },
    onHeartbeatChange: (ns) => {
      if (started) enqueueNamespace(ns);
    },
    onHealthChange: (health, synced) => {
      opts.metrics?.health?.(health, synced);
      // Ready conditions mention reachability: re-evaluate every import we manage.
      if (started) for (const key of opts.sources.managedImportKeys()) queue.add(key);
    },
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
  });
  const reconcile = createImportReconciler({
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
  });
  let workers: Promise<void> | undefined;
  let syncWaiter: { resolve: () => void; timer?: ReturnType<Clock['setTimer']> } | undefined;

  const waitSynced = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (poller.synced) {
          syncWaiter = undefined;
          resolve();
          return;
        }
        syncWaiter = { resolve, timer: opts.clock.setTimer(check, 100) };
      };
      check();
    });

  return {
    poller,
    queue,
    async start() {
      poller.start();
      await waitSynced();
      if (queue.shuttingDown) return;
      started = true;
      const keys = new Set<string>(opts.sources.managedImportKeys());
      for (const key of keys) queue.add(key);
      // Every service with records of our clusterset, in namespaces that exist here.
      for (const ns of new Set([...keys].map((k) => k.slice(0, k.indexOf('/')))))
        enqueueNamespace(ns);
      for (const key of allSnapshotKeys(poller)) queue.add(key);
      for (const key of opts.external?.keys() ?? []) queue.add(key);
      log.info('import controller started', { keys: queue.length, workers: opts.workers });
      workers = controller.run();
    },
    namespaceChanged(namespace) {
      // Services that appear in it later are named by the change feed (or found by the listing).
      void poller.refreshNow().then(() => {
        if (started) enqueueNamespace(namespace);
      });
    },
    enqueue(key) {
      if (started) queue.add(key);
    },
    enqueueAll() {
      if (!started) return;
      for (const key of opts.sources.managedImportKeys()) queue.add(key);
      for (const key of allSnapshotKeys(poller)) queue.add(key);
    },
    async stop() {
      if (syncWaiter?.timer !== undefined) opts.clock.clearTimer(syncWaiter.timer);
      syncWaiter?.resolve();
      await poller.stop();
      queue.shutdown();
      await workers;
    },
  };
}

function allSnapshotKeys(poller: Poller): string[] {
  return poller.allServices().map((s) => `${s.namespace}/${s.name}`);
}
