import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ListMeta,
} from '@kubernetes/client-node';
import {
  superviseInformer,
  type SupervisedInformer,
  type SupervisedInformerOptions,
} from './informer.js';

export interface KubeInformerOptions<T extends KubernetesObject> extends Pick<
  SupervisedInformerOptions<T>,
  'name' | 'onEvent' | 'logger' | 'clock'
> {
  kubeConfig: KubeConfig;
  /** The watch path, e.g. `/apis/multicluster.x-k8s.io/v1beta1/serviceexports`. */
  path: string;
  /**
   * The matching list call, e.g. `(page) => customApi.listClusterCustomObject({ ...page })`.
   * Pass `page` on (`limit` and `_continue`) and the list is read in pages of
   * 500 objects, each transformed before the next is read: listing a cluster's 5,000
   * Services keeps one page of full objects at a time, not 5,000 (issue 14). A list call
   * that ignores it reads everything in one response, as before.
   */
  list: (page: ListPage) => Promise<KubernetesListObject<T>>;
  /** Must be the one the list call uses too: the watch continues the list. */
  labelSelector?: string;
  /**
   * What the cache keeps of each listed or watched object, applied before it is cached or
   * delivered (memory is bounded by what the agent reads, issue 14). Default
   * `stripUnread`: the object without managedFields and kubectl's last-applied annotation.
   * Return `metadataStub(obj)` for an object the agent does not need in full. Must keep
   * `metadata.name`, `namespace` and `resourceVersion` (the watch resumes from it).
   */
  transform?: (obj: T) => T;
}

/** The paging parameters of a Kubernetes list call (`limit`, and the token of the next page). */
export interface ListPage {
  limit: number;
  _continue?: string;
}

/** Objects per list page (client-go's reflector uses the same). */
const listPageSize = 500;

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
 * deletionTimestamp, and its labels when asked: all of them, or only the named ones): what a
 * cache keeps of objects the agent must know exist, or may need later, but does not read.
 * `isMetadataStub` tells a stub from a full object.
 */
export function metadataStub<T extends KubernetesObject>(
  obj: T,
  keep: { labels?: boolean | readonly string[] } = {},
): T {
  const m = obj.metadata ?? {};
  const labels =
    m.labels === undefined || keep.labels === undefined || keep.labels === false
      ? undefined
      : keep.labels === true
        ? m.labels
        : pick(m.labels, keep.labels);
  // Whether it is going away (a terminating namespace) is part of whether it exists.
  const kept = ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp'] as const;
  const metadata = Object.fromEntries(kept.flatMap((k) => (m[k] === undefined ? [] : [[k, m[k]]])));
  const stub = { metadata: labels === undefined ? metadata : { ...metadata, labels } } as T;
  stubs.add(stub);
  return stub;
}

/** The named keys of `labels` that it has; undefined when it has none of them. */
function pick(
  labels: Record<string, string>,
  keys: readonly string[],
): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const k of keys) if (k in labels) (out ??= {})[k] = labels[k]!;
  return out;
}

export const isMetadataStub = (obj: object | undefined): boolean =>
  obj !== undefined && stubs.has(obj);

/** What a watch request asks of the server, and how long the client waits in silence. */
export interface WatchTimeouts {
  /** The server ends the watch after this long (`timeoutSeconds`); the client re-watches. */
  serverTimeoutSeconds: number;
  /** The client gives up on a watch silent for this long (client-node's `requestTimeoutMs`). */
  clientIdleTimeoutMs: number;
}

/**
 * The server ends each watch after 3 to 4.5 minutes (jittered so a restart of the API server
 * does not bring every watch back at once, as client-go's reflector does with 5 to 10), before
 * the supervisor's 5-minute watchdog; the client waits 30 s longer than that before it gives
 * up on a silent watch. client-node 2.0.1's own default aborts any watch silent for 30 s: on
 * an idle cluster every watch of every agent was torn down and re-opened twice a minute, each
 * abort an Error and a new TLS connection (idle CPU, issue 14).
 */
export function watchTimeouts(random: () => number = Math.random): WatchTimeouts {
  const serverTimeoutSeconds = 180 + Math.floor(random() * 90);
  return { serverTimeoutSeconds, clientIdleTimeoutMs: (serverTimeoutSeconds + 30) * 1000 };
}

type WatchCallback = (
  phase: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- client-node's callback type
  apiObj: any,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- client-node's callback type
  watchObj?: any,
) => void;

/** The part of client-node's `Watch` the wrapper drives (tests pass a fake). */
export interface WatchLike {
  requestTimeoutMs: number;
  watch(
    path: string,
    params: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController>;
}

/**
 * A Watch for client-node's ListWatch that asks for bookmarks (they keep an idle watch's
 * resourceVersion recent, so a re-watch after minutes of quiet resumes instead of failing
 * with 410 Gone and listing again) and a server-side timeout (`watchTimeouts`), transforms
 * each object before ListWatch caches it, and calls `alive` on every line the server sends.
 */
export function transformingWatch<T extends KubernetesObject>(
  inner: WatchLike,
  transform: (obj: T) => T,
  alive: () => void,
  timeouts: () => WatchTimeouts = watchTimeouts,
): Watch {
  const watch: WatchLike['watch'] = (path, params, callback, done) => {
    const { serverTimeoutSeconds, clientIdleTimeoutMs } = timeouts();
    // ListWatch runs one watch at a time on this Watch: setting it per call is safe.
    inner.requestTimeoutMs = clientIdleTimeoutMs;
    return inner.watch(
      path,
      { ...params, allowWatchBookmarks: true, timeoutSeconds: serverTimeoutSeconds },
      (phase, obj, raw) => {
        alive();
        // BOOKMARK and ERROR carry no object to cache; pass them as they are.
        callback(
          phase,
          phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED'
            ? transform(obj as T)
            : obj,
          raw,
        );
      },
      done,
    );
  };
  return { watch } as unknown as Watch;
}

/**
 * A supervised client-node informer on a real API server whose cache holds what `transform`
 * keeps (client-node's ListWatch, fed through `transformingWatch`).
 */
export function createKubeInformer<T extends KubernetesObject>(
  options: KubeInformerOptions<T>,
): SupervisedInformer<T> {
  const { kubeConfig, path, list, labelSelector, transform = stripUnread, ...supervised } = options;
  // client-node declares requestTimeoutMs private but reads it on every watch call: setting
  // it is the only way to change its 30 s inactivity abort.
  const inner = new Watch(kubeConfig) as unknown as WatchLike;
  return superviseInformer<T>({
    ...supervised,
    create: (listed, alive) =>
      new ListWatch<T>(
        path,
        transformingWatch(inner, transform, alive),
        async () => {
          const result = await listInPages(list, listPageSize, transform);
          listed();
          return result;
        },
        false,
        labelSelector,
      ),
  });
}
