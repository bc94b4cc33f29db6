import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ListMeta,
} from '@kubernetes/client-node';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../workqueue/clock.js';
import { superviseInformer, type InformerEvent, type SupervisedInformer } from './informer.js';

export interface KubeInformerOptions<T extends KubernetesObject> {
  name: string;
  kubeConfig: KubeConfig;
  /** The watch path, e.g. `/apis/multicluster.x-k8s.io/v1beta1/serviceexports`. */
  path: string;
  /**
   * The matching list call, e.g. `(page) => customApi.listClusterCustomObject({ ...page })`.
   * Pass `page` on (`limit` and `_continue`) and the list is read in pages of
   * `listPageSize`, each transformed before the next is read: listing a cluster's 5,000
   * Services keeps one page of full objects at a time, not 5,000 (issue 14). A list call
   * that ignores it reads everything in one response, as before.
   */
  list: (page: ListPage) => Promise<KubernetesListObject<T>>;
  /** Objects per list page; default 500 (client-go's reflector uses the same). */
  listPageSize?: number;
  /** Must be the one the list call uses too: the watch continues the list. */
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * What the cache keeps of each listed or watched object, applied before it is cached or
   * delivered (memory is bounded by what the agent reads, issue 14). Default
   * `stripUnread`: the object without managedFields and kubectl's last-applied annotation.
   * Return `metadataStub(obj)` for an object the agent does not need in full. Must keep
   * `metadata.name`, `namespace` and `resourceVersion` (the watch resumes from it).
   */
  transform?: (obj: T) => T;
  onEvent: (event: InformerEvent, obj: T) => void;
  logger: Logger;
  clock?: Clock;
  watchdogMs?: number;
  onRestart?: (reason: 'error' | 'watchdog') => void;
}

/** The paging parameters of a Kubernetes list call (`limit`, and the token of the next page). */
export interface ListPage {
  limit: number;
  _continue?: string;
}

export const defaultListPageSize = 500;

/**
 * Reads a list in pages and transforms each page's items before asking for the next one, so
 * only what `transform` keeps of the earlier pages stays reachable. The result carries the
 * last page's metadata without its continue token: every page of a paginated list is served
 * from the first page's snapshot, so its resourceVersion is the one the watch must start from.
 */
export async function listInPages<T extends KubernetesObject>(
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
  pageSize: number,
  transform: (obj: T) => T,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let token: string | undefined;
  for (;;) {
    const page = await list(
      token === undefined ? { limit: pageSize } : { limit: pageSize, _continue: token },
    );
    for (const item of page.items) items.push(transform(item));
    // Typed lists (CoreV1Api…) are deserialized into V1ListMeta (`_continue`); custom object
    // lists are the server's JSON as is (`continue`).
    const meta = page.metadata as (V1ListMeta & { continue?: string }) | undefined;
    token = meta?._continue ?? meta?.continue;
    if (token === undefined || token === '') {
      const metadata: V1ListMeta & { continue?: string } = { ...page.metadata };
      delete metadata._continue;
      delete metadata.continue;
      delete metadata.remainingItemCount;
      return { ...page, metadata, items };
    }
  }
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Drops the fields no agent reads and that are often most of an object's size: the server's
 * managedFields (one entry per field manager) and kubectl's copy of the whole applied object.
 * Mutates and returns `obj` (it was just parsed and is not shared).
 */
export function stripUnread<T extends KubernetesObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta === undefined) return obj;
  delete meta.managedFields;
  if (meta.annotations !== undefined && LAST_APPLIED in meta.annotations) {
    delete meta.annotations[LAST_APPLIED];
    if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
  }
  return obj;
}

const stubs = new WeakSet<object>();

/**
 * The identity of an object and nothing else (name, namespace, uid, resourceVersion,
 * deletionTimestamp, and its labels when asked): what a cache keeps of objects the agent must know exist, or may need
 * later, but does not read. `isMetadataStub` tells a stub from a full object.
 */
export function metadataStub<T extends KubernetesObject>(
  obj: T,
  keep: { labels?: boolean } = {},
): T {
  const m = obj.metadata ?? {};
  const stub = {
    metadata: {
      ...(m.name === undefined ? {} : { name: m.name }),
      ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
      ...(m.uid === undefined ? {} : { uid: m.uid }),
      ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
      // Whether it is going away (a terminating namespace) is part of whether it exists.
      ...(m.deletionTimestamp === undefined ? {} : { deletionTimestamp: m.deletionTimestamp }),
      ...(keep.labels === true && m.labels !== undefined ? { labels: m.labels } : {}),
    },
  } as T;
  stubs.add(stub);
  return stub;
}

export const isMetadataStub = (obj: object | undefined): boolean =>
  obj !== undefined && stubs.has(obj);

/**
 * A supervised client-node informer on a real API server whose cache holds what `transform`
 * keeps (client-node's ListWatch, fed through a Watch that transforms each event first).
 */
export function createKubeInformer<T extends KubernetesObject>(
  options: KubeInformerOptions<T>,
): SupervisedInformer<T> {
  const transform = options.transform ?? stripUnread;
  const inner = new Watch(options.kubeConfig);
  const watch = {
    watch: (
      path: string,
      params: Record<string, string | number | boolean | undefined>,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- client-node's callback type
      callback: (phase: string, apiObj: any, watchObj?: any) => void,
      done: (err: unknown) => void,
    ) =>
      inner.watch(
        path,
        params,
        (phase, obj, raw) =>
          // BOOKMARK and ERROR carry no object to cache; pass them as they are.
          callback(
            phase,
            phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED'
              ? transform(obj as T)
              : obj,
            raw,
          ),
        done,
      ),
  } as unknown as Watch;
  return superviseInformer<T>({
    name: options.name,
    onEvent: options.onEvent,
    logger: options.logger,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.watchdogMs === undefined ? {} : { watchdogMs: options.watchdogMs }),
    ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
    create: (listed) =>
      new ListWatch<T>(
        options.path,
        watch,
        async () => {
          const result = await listInPages(
            options.list,
            options.listPageSize ?? defaultListPageSize,
            transform,
          );
          listed();
          return result;
        },
        false,
        options.labelSelector,
        options.fieldSelector,
      ),
  });
}
