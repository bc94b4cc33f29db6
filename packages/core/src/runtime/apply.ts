import {
  ApiException,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { realClock, type Clock } from '../workqueue/clock.js';
import { fullJitterDelay, sleep } from '../workqueue/backoff.js';

export const isConflict = (e: unknown): boolean => e instanceof ApiException && e.code === 409;
export const isNotFound = (e: unknown): boolean => e instanceof ApiException && e.code === 404;
/**
 * 403 from the NamespaceLifecycle admission plugin: the namespace is being deleted, so nothing
 * new can be created in it. A race with deletion, not a permission problem.
 */
export const isNamespaceTerminating = (e: unknown): boolean =>
  e instanceof ApiException &&
  e.code === 403 &&
  /NamespaceTerminating|because it is being terminated/.test(
    typeof e.body === 'string' ? e.body : JSON.stringify(e.body ?? ''),
  );

/** Gave up after repeated 409s. */
export class ConflictRetriesExhaustedError extends Error {
  override readonly name = 'ConflictRetriesExhaustedError';
}

/**
 * Runs `attempt` again while it fails with 409 Conflict (client-go RetryOnConflict): the
 * attempt must re-read what it writes. Short jittered waits; anything else is rethrown.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T>,
  options: { attempts?: number; clock?: Clock; random?: () => number } = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (n >= attempts)
        throw new ConflictRetriesExhaustedError(`still conflicting after ${attempts} attempts`, {
          cause: error,
        });
      await sleep(
        options.clock ?? realClock,
        fullJitterDelay(n, { baseDelayMs: 10, maxDelayMs: 1_000 }, options.random),
      );
    }
  }
}

export interface CustomResource {
  group: string;
  version: string;
  plural: string;
}

export interface Applier {
  /** Server-side apply of a whole object (`fieldManager`, force): create or update what we own. */
  apply<T extends KubernetesObject>(obj: T): Promise<T>;
  /** Server-side apply of `status` of a namespaced custom resource. */
  applyStatus(
    resource: CustomResource,
    obj: KubernetesObject & { status: unknown },
  ): Promise<unknown>;
  /**
   * Merge-patches `status` with a resourceVersion precondition, so a write based on a stale
   * read fails with 409 (use with `retryOnConflict` and a fresh read).
   */
  patchStatus(
    resource: CustomResource,
    ref: { namespace: string; name: string; resourceVersion: string },
    status: unknown,
  ): Promise<unknown>;
  /** Deletes; absent is success. */
  delete(obj: KubernetesObject): Promise<void>;
}

export function createApplier(kubeConfig: KubeConfig, fieldManager: string, force = true): Applier {
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const ssa = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    apply: (obj) =>
      objects.patch(obj, undefined, undefined, fieldManager, force, PatchStrategy.ServerSideApply),
    applyStatus: (resource, obj) =>
      custom.patchNamespacedCustomObjectStatus(
        {
          ...resource,
          namespace: obj.metadata?.namespace ?? '',
          name: obj.metadata?.name ?? '',
          body: {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace },
            status: obj.status,
          },
          fieldManager,
          force,
        },
        ssa,
      ),
    patchStatus: (resource, ref, status) =>
      custom.patchNamespacedCustomObjectStatus(
        {
          ...resource,
          namespace: ref.namespace,
          name: ref.name,
          body: { metadata: { resourceVersion: ref.resourceVersion }, status },
        },
        merge,
      ),
    async delete(obj) {
      try {
        await objects.delete(obj);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}
