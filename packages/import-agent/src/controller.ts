import {
  createController,
  logFields,
  sleep,
  splitKey,
  type Controller,
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
import { createPoller, type Poller } from './poller/poller.js';
import { keyOf } from './poller/state.js';
import { createImportReconciler } from './reconcile/reconciler.js';
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
  /** Aborted by `stop`: ends the wait for the first snapshot. */
  readonly stopping: AbortController;
  /** Which clusters were live per namespace when its imports last all re-ran. */
  readonly liveness: LivenessTracker;
  workers?: Promise<void>;
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
  // The poller calls back only once started, when `w` exists; until the workers run what it
  // tells of is dropped (the start replays every key).
  const poller = createPoller({
    port: opts.cloudMap,
    clock: opts.clock,
    now: opts.now,
    logger: opts.logger,
    clustersetId: opts.trust.clustersetId,
    periods: opts.periods,
    heartbeatTtlMs: opts.heartbeatTtlMs,
    requestBudgetPerSecond: opts.requestBudgetPerSecond,
    isLocalNamespace: inScope(opts, policy, refusals),
    onServiceChange: (ns, name) => w.started && queue.add(`${ns}/${name}`),
    onHeartbeatChange: (ns) => w.started && w.liveness.observe(ns),
    onHealthChange: (health, synced) => {
      opts.metrics?.health?.(health, synced);
      // Ready conditions mention reachability: re-evaluate every import we manage.
      if (w.started) opts.sources.managedImportKeys().forEach((k) => queue.add(k));
    },
    metrics: opts.metrics,
  });
  const external = opts.external?.(poller);
  const controller = createController<string>({
    name: 'serviceimport',
    reconcile: createImportReconciler({
      ...opts,
      snapshot: poller,
      namespaces: policy,
      refusals,
      externalExport: external && ((ns, name) => external.exportFor(ns, name)),
    }),
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
    stopping: new AbortController(),
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
  return {
    poller,
    queue,
    start: (signal) => start(w, signal),
    namespaceKeys: (namespace) => poller.refreshNow().then(() => namespaceKeys(w, namespace)),
    allKeys: () => allKeys(w),
    enqueue(key) {
      if (w.started) queue.add(key);
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

function namespaceKeys(w: Pick<ImportWiring, 'opts' | 'poller'>, namespace: string): string[] {
  const managed = w.opts.sources.managedImportKeys().filter((k) => k.startsWith(`${namespace}/`));
  return [...w.poller.services(namespace).map((s) => keyOf(namespace, s.name)), ...managed];
}

/** Every import of ours, and every service of our clusterset in a namespace that exists here. */
function allKeys(w: Pick<ImportWiring, 'opts' | 'poller'>): string[] {
  const polled = w.poller.allServices().map((s) => keyOf(s.namespace, s.name));
  return [...w.opts.sources.managedImportKeys(), ...polled];
}

/** Polls, waits for the first snapshot, replays every import and runs the workers. */
async function start(w: ImportWiring, signal?: AbortSignal): Promise<void> {
  const { poller, queue, opts } = w;
  poller.start();
  // The first snapshot, checked every 100 ms.
  const { signal: stopping } = w.stopping;
  while (!poller.synced && !stopping.aborted)
    await sleep(opts.clock, 100, stopping).catch(() => undefined);
  if (stopping.aborted) return;
  w.started = true;
  const keys = allKeys(w);
  for (const key of [...keys, ...(w.external?.keys() ?? [])]) queue.add(key);
  // What every import is first reconciled with: later heartbeat changes and expiries compare
  // with it.
  for (const ns of new Set(keys.map((k) => splitKey(k)[0]))) w.liveness.observe(ns, true);
  w.log.info('import controller started', { keys: queue.length, workers: opts.workers });
  w.workers = w.controller.run(signal);
}

async function stop(w: ImportWiring): Promise<void> {
  w.stopping.abort();
  await w.poller.stop();
  w.liveness.stop();
  w.queue.shutdown();
  await w.workers;
}
