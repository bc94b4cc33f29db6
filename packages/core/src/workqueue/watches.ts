import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';

/** What happened to a watched object (an informer's verbs; other sources say `update`). */
export type WatchEvent = 'add' | 'update' | 'delete';

export type WatchHandler<T> = (event: WatchEvent, obj: T) => void;

/** Anything that tells of events: an informer, a cache, a poller. `on` returns the unsubscribe. */
export interface EventSource<T> {
  on(handler: WatchHandler<T>): () => void;
}

/**
 * One row of an agent's watches table (`src/watches.ts`, docs/contributing.md#reconcile-shape;
 * controller-runtime's `Watches(source, handler)`): what is watched, which keys each event maps to.
 */
export interface Watch<K> {
  /** What is watched, e.g. `ServiceExport` (the agent's table test, debug logs). */
  readonly kind: string;
  readonly source: EventSource<never>;
  /** Keys of an event (a promise: read first); a throw (malformed object): none, a debug log. */
  readonly keys: (event: WatchEvent, obj: never) => Iterable<K> | Promise<Iterable<K>>;
}

/** A row, typed by its source (the table itself holds rows of several object types). */
export function watch<T, K>(
  kind: string,
  source: EventSource<T>,
  keys: (event: WatchEvent, obj: T) => Iterable<K> | Promise<Iterable<K>>,
): Watch<K> {
  return { kind, source, keys } as unknown as Watch<K>;
}

/** What key functions read of a Kubernetes object (client-node's and core's types fit). */
export interface WatchedObject {
  metadata?: { namespace?: string; name?: string; labels?: Record<string, string> };
}

/** `namespace/name` of an object. */
export const objectKey = (obj: WatchedObject): string => keyIn(obj, obj.metadata?.name);

/** `namespace/name` of what `name` names in the object's namespace (a label's Service). */
export function keyIn(obj: WatchedObject, name: string | undefined): string {
  const namespace = obj.metadata?.namespace;
  if (namespace === undefined || namespace === '' || name === undefined || name === '')
    throw new Error('object without namespace or name');
  return `${namespace}/${name}`;
}

/** The namespace and the name of a `namespace/name` key. */
export const splitKey = (key: string): [string, string] => {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
};

/**
 * Subscribes every row to its source; each event's keys go to `add` (the work queue: event
 * handlers only enqueue, docs/contributing.md#reconcile-shape). Returns the unsubscribe.
 */
export function bindWatches<K>(
  table: readonly Watch<K>[],
  add: (key: K) => void,
  logger: Logger,
): () => void {
  const addAll = (keys: Iterable<K>): void => {
    for (const key of keys) add(key);
  };
  const offs = table.map((row) =>
    row.source.on((event, obj) => {
      const noKey = (error: unknown): void =>
        logger.debug('watch event maps to no key', {
          [logFields.kind]: row.kind,
          event,
          [logFields.error]: error,
        });
      try {
        const keys = row.keys(event, obj);
        if (keys instanceof Promise) keys.then(addAll, noKey);
        else addAll(keys);
      } catch (error) {
        noKey(error);
      }
    }),
  );
  return () => {
    for (const off of offs) off();
  };
}

/** An event source fed by its owner (`emit`); handlers may come later (they miss the past). */
export interface EventHub<T> extends EventSource<T> {
  emit(event: WatchEvent, obj: T): void;
}

export function createEventHub<T>(): EventHub<T> {
  const handlers = new Set<WatchHandler<T>>();
  return {
    on(handler) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    emit(event, obj) {
      for (const h of handlers) h(event, obj);
    },
  };
}
