import {
  logFields,
  splitKey,
  type ClusterIdentity,
  type Logger,
  type ReconcileContext,
  type ReconcileResult,
} from '@cloudmap-mcs/core';
import { isNotFound } from '@cloudmap-mcs/core/runtime';
import type { ServiceExportObject } from './k8s-types.js';
import { reconcileExport } from './reconcile-export.js';
import {
  createReconcilerState,
  type ExportReconcilerDeps,
  type ReconcilerState,
} from './reconciler-state.js';
import { FINALIZER } from './sources.js';
import { unexport } from './unexport.js';

export type { ExportReconcilerDeps } from './reconciler-state.js';

/*
 * The export reconciler, top to bottom:
 *   reconciler.ts         the key: deleted/un-exported or live (this file)
 *   reconcile-export.ts   desired state from the caches; refusals as conditions
 *   cloudmap-apply.ts     ensure the Cloud Map service, write the (sharded) records, report
 *   unexport.ts           remove this cluster's records, shards first
 *   status-writer.ts      conditions and transition Events on the ServiceExport
 *   reconciler-state.ts   dependencies and what is remembered across reconciles
 */

export interface ExportReconciler {
  /** `ctx` comes from core's controller harness; tests may call without it. */
  reconcile(key: string, ctx?: ReconcileContext): Promise<ReconcileResult | void>;
  /** The key whose Cloud Map service has this ID, to requeue on an operation's completion. */
  keyForService(serviceId: string): string | undefined;
  /** Exported Service names by namespace (each such namespace gets a heartbeat). */
  exportsByNamespace(): Map<string, string[]>;
  /** How many ServiceExports are currently exported (metrics). */
  exportedCount(): number;
}

/**
 * The export agent's reconcile of one ServiceExport key
 * (docs/architecture.md#how-each-agent-reconciles).
 */
export function createExportReconciler(deps: ExportReconcilerDeps): ExportReconciler {
  const state = createReconcilerState(deps);
  return {
    async reconcile(key, ctx) {
      // The harness's child logger {controller, key, reconcileId}
      // (docs/contributing.md#config-and-logs), so these lines and its outcome line share one
      // reconcile id.
      const log =
        ctx?.logger ??
        deps.logger.child({ [logFields.controller]: 'serviceexport', [logFields.key]: key });
      try {
        return await reconcileKey(state, key, log);
      } catch (error) {
        // The only Kubernetes calls here are writes to the ServiceExport itself. Not found: it
        // is gone, e.g. the finalizer we removed let it go and this reconcile read a cache that
        // still held it. Its delete event runs the key again (un-exporting if needed), so this
        // is a no-op, not a failure.
        if (isNotFound(error)) {
          log.debug('ServiceExport already gone');
          return;
        }
        throw error;
      }
    },
    keyForService: (serviceId) => state.serviceKeys.get(serviceId),
    exportsByNamespace: () => exportsByNamespace(state),
    exportedCount: () => state.exported.size,
  };
}

async function reconcileKey(
  state: ReconcilerState,
  key: string,
  log: Logger,
): Promise<ReconcileResult | void> {
  const { sources } = state.deps;
  const [namespace, name] = splitKey(key);
  const identity = sources.identity();
  if (identity === undefined) return { requeueAfterMs: state.deps.pendingRequeueMs };
  const se = sources.serviceExport(namespace, name);
  if (se === undefined || se.metadata.deletionTimestamp !== undefined) {
    return removeExport(state, namespace, name, se, identity, log);
  }
  return reconcileExport(state, se, identity, log);
}

/** A deleted (or deleting) ServiceExport: un-export, then let the object go. */
async function removeExport(
  state: ReconcilerState,
  namespace: string,
  name: string,
  se: ServiceExportObject | undefined,
  identity: ClusterIdentity,
  log: Logger,
): Promise<ReconcileResult | void> {
  const done = await unexport(state, namespace, name, identity, log);
  if (!done) return { requeueAfterMs: state.deps.pendingRequeueMs };
  if (se !== undefined && (se.metadata.finalizers ?? []).includes(FINALIZER)) {
    await state.deps.writer.removeFinalizer(se, FINALIZER);
    state.events.forget(namespace, name);
    log.info('export removed');
  }
}

function exportsByNamespace(state: ReconcilerState): Map<string, string[]> {
  const byNamespace = Map.groupBy([...state.exported].map(splitKey), ([namespace]) => namespace);
  return new Map([...byNamespace].map(([ns, keys]) => [ns, keys.map(([, name]) => name)]));
}
