import type { ServiceExportObject } from './k8s-types.js';
import type { EventType, ServiceExportWriter } from './sources.js';

/**
 * One Event per distinct happening on a ServiceExport. The reconciler emits Events on
 * condition transitions, judged against the informer cache; right after a status write the
 * cache may still hold the old conditions, so the next reconcile sees the same transition
 * again and would emit the same Event twice (issue 11: "one export failure produced two
 * identical Events"). This drops an Event identical (type, reason, message) to the last one
 * emitted for the same object within `windowMs`, as client-go's event correlator aggregates
 * identical events. Anything different in between lets a repeat through.
 */
export interface EventDedup {
  event(se: ServiceExportObject, type: EventType, reason: string, message: string): void;
  /** The object is gone: drop what was remembered of it. */
  forget(namespace: string, name: string): void;
}

interface Last {
  uid: string | undefined;
  signature: string;
  atMs: number;
}

export function createEventDedup(
  emit: ServiceExportWriter['event'],
  nowMs: () => number,
  opts: { windowMs?: number; maxObjects?: number } = {},
): EventDedup {
  const windowMs = opts.windowMs ?? 10 * 60_000;
  const maxObjects = opts.maxObjects ?? 10_000;
  const last = new Map<string, Last>();
  return {
    event(se, type, reason, message) {
      const key = `${se.metadata.namespace}/${se.metadata.name}`;
      const signature = JSON.stringify([type, reason, message]);
      const now = nowMs();
      const seen = last.get(key);
      if (
        seen !== undefined &&
        seen.uid === se.metadata.uid &&
        seen.signature === signature &&
        now - seen.atMs < windowMs
      ) {
        return;
      }
      // Re-inserted so the map's order is oldest first, and bounded by dropping the oldest.
      last.delete(key);
      last.set(key, { uid: se.metadata.uid, signature, atMs: now });
      if (last.size > maxObjects) last.delete(last.keys().next().value as string);
      emit(se, type, reason, message);
    },
    forget: (namespace, name) => void last.delete(`${namespace}/${name}`),
  };
}
