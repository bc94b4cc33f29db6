import {
  logFields,
  mergeExports,
  splitKey,
  type ClusterExport,
  type Clock,
  type EventRecorder,
  type IPFamily,
  type Logger,
  type ReconcileResult,
  type Reconciler,
  type RefusalLog,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import type { CloudMapSnapshot } from '../poller/snapshot.js';
import type { CollisionMetrics } from './collisions.js';
import { converge, nextCheck, writeStatus } from './converge.js';
import { liveExports, UNEXPORT_GRACE_MS, type LiveExports } from './exports.js';
import { collectRefusals, type ImportRef } from './import-events.js';
import type { ServiceImportObject } from './k8s-types.js';
import { derivedNameOf, isOurs } from './ownership.js';
import { NamespaceTerminatingError, type ImportSources, type ImportWriter } from './ports.js';
import type { RecentWrites, Used } from './recent-writes.js';
import {
  namespaceDecision,
  serviceNameProblem,
  type ImportCaps,
  type NamespacePolicy,
} from './scope.js';
import { sharedParts, type Shared } from './shared.js';
import { deleteImport, type Pass } from './steps.js';
import { cacheView, type WriteMetrics } from './view.js';

export interface ImportMetrics extends CollisionMetrics, WriteMetrics {
  refused?(reason: string): void;
  staleClusters?(namespace: string, name: string, count: number): void;
}

export interface ImportReconcilerDeps {
  sources: ImportSources;
  writer: ImportWriter;
  snapshot: CloudMapSnapshot;
  trust: TrustPolicy;
  heartbeatTtlMs: number;
  /** Wall-clock ms since the epoch (status times; liveness uses the snapshot's read times). */
  now: () => number;
  logger: Logger;
  metrics?: ImportMetrics | undefined;
  /** Our writes laid over the informer cache until it catches up (see recent-writes.ts). */
  recent?: RecentWrites;
  /** Monotonic time for `recent` and the refusal log (defaults to the real clock). */
  clock?: Clock;
  /**
   * Counts and logs (rate-limited) everything refused; defaults to one over `logger` and
   * `metrics.refused`. Shared so other refusals (namespace policy) use the same metric and log.
   */
  refusals?: RefusalLog;
  /** Warning Events about name collisions (none recorded when absent). */
  events?: EventRecorder | undefined;
  /** Where imports may exist (scope.ts); default: all but the four built-in denied ones. */
  namespaces?: NamespacePolicy;
  /** Caps on imports per namespace and per agent (scope.ts); default DEFAULT_IMPORT_CAPS. */
  caps?: ImportCaps | undefined;
  /**
   * A user-selected non-Kubernetes Cloud Map service to import under a key (external/,
   * ADR 0014), used only while no cluster of the clusterset exports that key.
   */
  externalExport?: ((namespace: string, name: string) => ClusterExport | undefined) | undefined;
  /** This cluster's Service IP families, primary first; undefined while unknown (families.ts). */
  clusterFamilies?: (() => readonly IPFamily[] | undefined) | undefined;
}

export { SLICE_MANAGED_BY } from './steps.js';

/** Re-check an import refused by a cap this often, to take a slot freed meanwhile. */
const CAP_RECHECK_MS = 60_000;

/**
 * One key, `<namespace>/<name>`: reads the Cloud Map snapshot and the informer caches, and
 * converges the ServiceImport, its derived Service and its EndpointSlices
 * (docs/architecture.md#how-each-agent-reconciles). Level-triggered: it never asks what happened,
 * only what should exist. Reads top to bottom: scope → live exports → admission → ServiceImport →
 * derived Service → slices → status → when to look again.
 */
export function createImportReconciler(deps: ImportReconcilerDeps): Reconciler<string> {
  const shared = sharedParts(deps);
  return async (key, ctx) => {
    const log =
      ctx?.logger ??
      deps.logger.child({ [logFields.controller]: 'serviceimport', [logFields.key]: key });
    try {
      return await reconcileKey(shared, key, log);
    } catch (error) {
      // The namespace is going away with everything in it; its deletion enqueues the key again.
      if (!(error instanceof NamespaceTerminatingError)) throw error;
      log.debug('write dropped: namespace terminating', { [logFields.error]: error.message });
      return;
    }
  };
}

async function reconcileKey(s: Shared, key: string, log: Logger): Promise<ReconcileResult | void> {
  const { deps } = s;
  const [namespace, name] = splitKey(key);
  if (!deps.sources.namespaceExists(namespace)) return;
  const used: Used = { untilMs: 0 };
  const view = cacheView(deps.sources, s.recent, used);
  const p: Pass = {
    key,
    namespace,
    name,
    markers: {
      importName: name,
      ...derivedNameOf(view.serviceImport(namespace, name), namespace, name),
    },
    log,
    view,
    writer: s.writer,
  };
  if (!(await inScope(s, p))) return;
  const refusals = collectRefusals(s.refusals);
  const live = liveExports(
    {
      snapshot: deps.snapshot,
      trust: deps.trust,
      heartbeatTtlMs: deps.heartbeatTtlMs,
      refusals,
      exportedHere: (ns, n) => deps.sources.serviceExportExists(ns, n),
      unexportedLately: (ns, n) => {
        const at = deps.sources.serviceExportDeletedAtMs?.(ns, n);
        return at !== undefined && deps.now() - at < UNEXPORT_GRACE_MS;
      },
      now: deps.now,
    },
    log,
    namespace,
    name,
  );
  deps.metrics?.staleClusters?.(namespace, name, live.stale.length);
  try {
    return await importLive(s, p, live, used);
  } finally {
    // After the writes: about our ServiceImport (its uid) once it exists.
    const ref = importRef(p);
    s.events.refused(ref, refusals.collected);
    s.events.stale(ref, live.stale, deps.heartbeatTtlMs);
  }
}

/** Converges the import to the live exports: created, updated or deleted. */
async function importLive(
  s: Shared,
  p: Pass,
  live: LiveExports,
  used: Used,
): Promise<ReconcileResult | void> {
  const { deps } = s;
  const { namespace, name } = p;
  // MCS exports win; a user's CloudMapServiceImport of the same key reports the conflict.
  const external = live.exports.length === 0 ? deps.externalExport?.(namespace, name) : undefined;
  const merged = mergeExports(external === undefined ? live.exports : [external]);
  if (merged === undefined) {
    await deleteImport(p, s.collisions, s.admission);
    return;
  }
  const cachedSi = p.view.serviceImport(namespace, name);
  if (!admitted(s, p, cachedSi)) return { requeueAfterMs: CAP_RECHECK_MS };
  const written = await converge(s, p, merged, cachedSi);
  if (written === undefined) return;
  await writeStatus(s, p, merged, live, written);
  return nextCheck(s, p, merged, live, written, used);
}

/** A key whose name or namespace we may not import is refused; a leftover import of ours goes. */
async function inScope(s: Shared, p: Pass): Promise<boolean> {
  const badName = serviceNameProblem(p.name);
  if (badName !== undefined) {
    // Refused once per reconcile of the key (counted; logged at most every 10 minutes),
    // not retried: nothing of ours can exist under such a name.
    s.refusals.refused(
      { reason: 'invalid-service-name', subject: p.key, fields: { detail: badName } },
      p.log,
    );
    return false;
  }
  const decision = namespaceDecision(s.policy, p.namespace);
  if (decision.allowed) return true;
  // Nothing is created here; an import of ours left from before the policy (the namespace's
  // consent withdrawn) is removed like an unexported one.
  if (s.deps.snapshot.get(p.namespace, p.name) !== undefined)
    s.refusals.refused(
      { reason: 'namespace-denied', subject: p.key, fields: { detail: decision.why } },
      p.log,
    );
  await deleteImport(p, s.collisions, s.admission);
  return false;
}

/** A new import (none of ours yet) takes a slot under the caps, or is refused for now. */
function admitted(s: Shared, p: Pass, cachedSi: ServiceImportObject | undefined): boolean {
  if (isOurs('ServiceImport', cachedSi, p.markers)) return true;
  const admission = s.admission.admit(p.key);
  if (admission.admitted) return true;
  s.refusals.refused(
    { reason: 'import-cap', subject: p.key, fields: { detail: admission.why } },
    p.log,
  );
  s.events.capped({ namespace: p.namespace, name: p.name }, admission.why);
  return false;
}

/** The ServiceImport Events are about: ours, with its uid once it exists. */
function importRef(p: Pass): ImportRef {
  const si = p.view.serviceImport(p.namespace, p.name);
  const uid = isOurs('ServiceImport', si, p.markers) ? si.metadata.uid : undefined;
  return { namespace: p.namespace, name: p.name, ...(uid === undefined ? {} : { uid }) };
}
