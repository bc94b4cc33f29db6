import type { Clock } from '@cloudmap-mcs/core';
import { stripUnread } from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject, ObjectMeta } from './k8s-types.js';

/**
 * What this agent wrote in the last few seconds, laid over the informer cache. Our own writes
 * come back as informer events that requeue the key, often before the cache holds the other
 * objects of the same reconcile; without this overlay the next reconcile would see them
 * missing or old and write them again (harmless with server-side apply, but twice the API
 * writes while converging). An entry ends when the cache shows the resourceVersion we wrote,
 * or after `ttlMs`; a reconcile that used one asks to run again then, so an edit by someone
 * else in that window is still corrected.
 *
 * Memory (issue 14): an entry keeps the object as the informer cache would (no managedFields,
 * which the apply response carries and nothing here reads), and expired entries are dropped
 * at the next write even when their key is never read again — a heap snapshot at 1,000
 * imports found hundreds of applied objects, managedFields and all, kept for good.
 */
type Kind = 'ServiceImport' | 'Service' | 'EndpointSlice';

interface Entry {
  obj: { metadata: ObjectMeta } | undefined; // undefined: deleted
  untilMs: number;
}

export interface RecentWrites {
  applied(kind: Kind, obj: { metadata: ObjectMeta }): void;
  deleted(kind: Kind, namespace: string, name: string): void;
  /** The cached object, or our newer write while the cache has not caught up. */
  overlay<T extends { metadata: ObjectMeta }>(
    kind: Kind,
    namespace: string,
    name: string,
    cached: T | undefined,
    used: Used,
  ): T | undefined;
  /** Cached slices of an import with our recent applies and deletes laid over. */
  overlaySlices(
    namespace: string,
    cached: readonly EndpointSliceObject[],
    belongs: (s: EndpointSliceObject) => boolean,
    used: Used,
  ): EndpointSliceObject[];
  /** Entries held (live or not yet swept). */
  readonly size: number;
}

/** Per reconcile: when the latest overlay it relied on expires (0: none used). */
export interface Used {
  untilMs: number;
}

export function createRecentWrites(clock: Clock, ttlMs = 5_000): RecentWrites {
  const entries = new Map<string, Entry>();
  const key = (kind: Kind, ns: string, name: string): string => `${kind}/${ns}/${name}`;
  let sweptAtMs = clock.now();
  /** Drops expired entries, at most once per ttl (a write may come for every key). */
  const sweep = (): void => {
    const now = clock.now();
    if (now - sweptAtMs < ttlMs) return;
    sweptAtMs = now;
    for (const [k, e] of entries) if (now >= e.untilMs) entries.delete(k);
  };
  const live = (k: string, cachedRv: string | undefined, used: Used): Entry | undefined => {
    const e = entries.get(k);
    if (e === undefined) return undefined;
    const caughtUp =
      e.obj !== undefined ? cachedRv === e.obj.metadata.resourceVersion : cachedRv === undefined;
    if (clock.now() >= e.untilMs || caughtUp) {
      entries.delete(k);
      return undefined;
    }
    used.untilMs = Math.max(used.untilMs, e.untilMs);
    return e;
  };
  return {
    applied(kind, obj) {
      if (obj.metadata.resourceVersion === undefined) return;
      sweep();
      entries.set(key(kind, obj.metadata.namespace, obj.metadata.name), {
        obj: stripUnread(structuredClone(obj) as Parameters<typeof stripUnread>[0]) as typeof obj,
        untilMs: clock.now() + ttlMs,
      });
    },
    deleted(kind, namespace, name) {
      sweep();
      entries.set(key(kind, namespace, name), { obj: undefined, untilMs: clock.now() + ttlMs });
    },
    overlay(kind, namespace, name, cached, used) {
      const e = live(key(kind, namespace, name), cached?.metadata.resourceVersion, used);
      if (e === undefined) return cached;
      return e.obj === undefined ? undefined : (structuredClone(e.obj) as typeof cached);
    },
    overlaySlices(namespace, cached, belongs, used) {
      const out = new Map<string, EndpointSliceObject>();
      for (const s of cached) {
        const o = this.overlay('EndpointSlice', namespace, s.metadata.name, s, used);
        if (o !== undefined) out.set(s.metadata.name, o);
      }
      const prefix = key('EndpointSlice', namespace, '');
      for (const [k, e] of entries) {
        if (!k.startsWith(prefix) || e.obj === undefined) continue;
        const name = k.slice(prefix.length);
        if (out.has(name) || cached.some((s) => s.metadata.name === name)) continue;
        const slice = e.obj as EndpointSliceObject;
        if (!belongs(slice) || live(k, undefined, used) === undefined) continue;
        out.set(name, structuredClone(slice));
      }
      return [...out.values()];
    },
    get size() {
      return entries.size;
    },
  };
}
