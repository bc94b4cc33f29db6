import {
  createController,
  createEventHub,
  logFields,
  type Clock,
  type Controller,
  type EventHub,
  type Logger,
  type RefusalLog,
  type WorkQueue,
} from '@cloudmap-mcs/core';
import type {
  ExternalExports,
  ImportController,
  ImportControllerOptions,
} from './controller-options.js';
import { createLivenessTracker, type LivenessTracker } from './liveness-tracker.js';
import { createPoller, type Poller, type PollerOptions } from './poller/poller.js';
import { createImportReconciler, type ImportReconcilerDeps } from './reconcile/reconciler.js';
import {
  defaultNamespacePolicy,
  namespaceDecision,
  recordRefusals,
  type NamespacePolicy,
} from './reconcile/scope.js';

export type * from './controller-options.js';

/** The controller's moving parts, shared by the steps below. */
interface ImportWiring {
  readonly opts: ImportControllerOptions;
  readonly log: Logger;
  readonly controller: Controller<string>;
  readonly queue: WorkQueue<string>;
  readonly poller: Poller;
  readonly external: ExternalExports | undefined;
  /** Whether the workers run (the first snapshot is complete). */
  started: boolean;
  /** Which clusters were live per namespace when its imports last all re-ran. */
  readonly liveness: LivenessTracker;
  workers?: Promise<void>;
  syncWaiter?: { resolve: () => void; timer?: ReturnType<Clock['setTimer']> };
}

/**
 * Wires the poller, the work queue and the reconciler (docs/contributing.md#reconcile-shape).
 * Workers start only after the first complete Cloud Map snapshot (and, by the caller, after
 * the informer caches synced), then every managed ServiceImport is replayed so deletes missed
 * while down happen.
 */
export function createImportController(opts: ImportControllerOptions): ImportController {
  const policy = opts.namespaces ?? defaultNamespacePolicy;
  // One refusal log for the poller's scope and the reconciler: one metric, one rate limit.
  const refusals = recordRefusals(opts.logger, opts.clock, opts.metrics?.refused);
  // Built in order; what the poller tells of reaches the parts built after it through these.
  const polled: Polled = {
    services: createEventHub(),
    heartbeats: createEventHub(),
    health: createEventHub(),
  };
  const poller = createPoller(pollerOptions(opts, polled, inScope(opts, policy, refusals)));
  const external = opts.external?.(poller);
  const controller = createController<string>({
    name: 'serviceimport',
    reconcile: createImportReconciler(reconcilerOptions(opts, poller, external, policy, refusals)),
    workers: opts.workers,
    clock: opts.clock,
    logger: opts.logger,
    metrics: opts.controllerMetrics,
  });
  const { queue } = controller;
  const w: ImportWiring = {
    opts,
    log: opts.logger.child({ [logFields.controller]: 'serviceimport' }),
    controller,
    queue,
    poller,
    external,
    started: false,
    liveness: createLivenessTracker({
      clustersetId: opts.trust.clustersetId,
      ttlMs: opts.heartbeatTtlMs,
      clock: opts.clock,
      now: opts.now,
      heartbeatService: (ns) => poller.heartbeatService(ns),
      onChange: (ns) => namespaceKeys({ opts, poller }, ns).forEach((key) => queue.add(key)),
      refusals,
    }),
  };
  polled.services.on((_e, key) => w.started && queue.add(key));
  polled.heartbeats.on((_e, ns) => w.started && w.liveness.observe(ns));
  // Ready conditions mention reachability: re-evaluate every import we manage.
  polled.health.on(
    () => w.started && opts.sources.managedImportKeys().forEach((k) => queue.add(k)),
  );
  return {
    poller,
    queue,
    start: (signal) => start(w, signal),
    namespaceKeys: (namespace) => poller.refreshNow().then(() => namespaceKeys(w, namespace)),
    allKeys: () => [...opts.sources.managedImportKeys(), ...allSnapshotKeys(poller)],
    enqueue(key) {
      if (w.started) queue.add(key);
    },
    stop: () => stop(w),
  };
}

interface Polled {
  /** A service's records changed: its key. */
  services: EventHub<string>;
  /** A namespace's heartbeats changed. */
  heartbeats: EventHub<string>;
  health: EventHub<undefined>;
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
  polled: Polled,
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
    requestBudgetPerSecond: opts.requestBudgetPerSecond,
    isLocalNamespace,
    onServiceChange: (ns, name) => polled.services.emit('update', `${ns}/${name}`),
    onHeartbeatChange: (ns) => polled.heartbeats.emit('update', ns),
    onHealthChange: (health, synced) => {
      opts.metrics?.health?.(health, synced);
      polled.health.emit('update', undefined);
    },
    metrics: opts.metrics,
  };
}

function reconcilerOptions(
  opts: ImportControllerOptions,
  poller: Poller,
  external: ExternalExports | undefined,
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
    metrics: opts.metrics,
    events: opts.events,
    namespaces: policy,
    refusals,
    caps: opts.caps,
    externalExport: external === undefined ? undefined : (ns, name) => external.exportFor(ns, name),
    clusterFamilies: opts.clusterFamilies,
  };
}

function namespaceKeys(w: Pick<ImportWiring, 'opts' | 'poller'>, namespace: string): string[] {
  const managed = w.opts.sources.managedImportKeys().filter((k) => k.startsWith(`${namespace}/`));
  return [...w.poller.services(namespace).map((s) => `${namespace}/${s.name}`), ...managed];
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
    for (const key of namespaceKeys(w, ns)) queue.add(key);
  for (const key of allSnapshotKeys(poller)) queue.add(key);
  for (const key of w.external?.keys() ?? []) queue.add(key);
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
