import {
  encodeClusterExport,
  findCondition,
  isCloudMapError,
  isCloudMapNotFound,
  type ClusterIdentity,
  type Logger,
  type ReconcileResult,
} from '@cloudmap-mcs/core';
import { exportToCloudMap } from './cloudmap-apply.js';
import { buildDesiredExport } from './desired.js';
import type { ServiceExportObject } from './k8s-types.js';
import { podLabelSourceFor } from './pod-label-attributes.js';
import type { ReconcilerState } from './reconciler-state.js';
import { quotaHint, refusal } from './shard-status.js';
import { FINALIZER } from './sources.js';
import { writeStatus } from './status-writer.js';
import { unexport } from './unexport.js';

/** Cloud Map errors that a retry alone does not fix: shown as Ready=False/Failed. */
const PERSISTENT_ERRORS: ReadonlySet<string> = new Set([
  'InvalidInput',
  'ResourceLimitExceeded',
  'AccessDeniedException',
]);

/**
 * A live ServiceExport: builds the desired state from the caches (Service, EndpointSlices,
 * pod labels), refuses what cannot be exported with a condition, and hands the rest to Cloud Map.
 */
export async function reconcileExport(
  state: ReconcilerState,
  se: ServiceExportObject,
  identity: ClusterIdentity,
  log: Logger,
): Promise<ReconcileResult | void> {
  const { deps } = state;
  const { sources, writer } = deps;
  const { namespace, name } = se.metadata;
  if (!(se.metadata.finalizers ?? []).includes(FINALIZER)) await writer.addFinalizer(se, FINALIZER);
  // A new export of objects the caches hold only as stubs: they are being read.
  if (sources.loading?.(namespace, name) === true) return { requeueAfterMs: deps.pendingRequeueMs };
  const svc = sources.service(namespace, name);
  const pods = podLabelSourceFor(se, deps.podLabelAttributes ?? [], sources);
  if (pods.refused !== undefined) {
    // Never trimmed, never half-applied: the records written last stay as they are.
    await writeStatus(state, se, { kind: 'failed', message: pods.refused }, log);
    return;
  }
  if (pods.waiting === true) {
    // A first export says why it waits (e.g. no RBAC for pods); an established one keeps
    // Ready=True through an agent restart instead of flapping to Pending and back.
    if (findCondition(se.status?.conditions, 'Ready')?.status !== 'True') {
      const message =
        'Waiting for the pod watch (pod label attributes) to sync; the export agent needs get, list and watch on pods.';
      await writeStatus(state, se, { kind: 'pending', message }, log);
    }
    return { requeueAfterMs: deps.pendingRequeueMs };
  }
  const desired = buildDesiredExport(
    identity,
    se,
    svc,
    svc ? sources.endpointSlices(namespace, name) : [],
    pods.source,
  );
  if (!desired.valid) {
    const done = await unexport(state, namespace, name, identity, log);
    const { reason, message } = desired;
    await writeStatus(state, se, { kind: 'invalid', reason, message }, log);
    return done ? undefined : { requeueAfterMs: deps.pendingRequeueMs };
  }
  const encoded = encodeClusterExport(desired.export);
  const refused = refusal(encoded.problems);
  if (refused !== undefined) {
    await writeStatus(state, se, { kind: 'failed', message: refused }, log);
    return;
  }
  try {
    return await exportToCloudMap(state, se, identity, desired.export, encoded.instances, log);
  } catch (error) {
    // Deleted outside the agent: look the service up (or create it) again next time.
    if (isCloudMapNotFound(error))
      state.deps.resolver.forget(se.metadata.namespace, se.metadata.name);
    await reportPersistentError(state, se, error, log);
    throw error;
  }
}

/**
 * A refusal that retrying will not fix is also shown on the ServiceExport; the caller still
 * throws the error so the key backs off and is retried (the cause may be fixed outside).
 */
async function reportPersistentError(
  state: ReconcilerState,
  se: ServiceExportObject,
  error: unknown,
  log: Logger,
): Promise<void> {
  const cause = isCloudMapError(error) ? error : (error as { cause?: unknown }).cause;
  if (!isCloudMapError(cause) || !PERSISTENT_ERRORS.has(cause.code)) return;
  const message =
    `Cloud Map refused ${cause.operation}: ${cause.code}: ${cause.message}` +
    quotaHint(cause.code, cause.message);
  await writeStatus(state, se, { kind: 'failed', message: message.slice(0, 1024) }, log);
}
