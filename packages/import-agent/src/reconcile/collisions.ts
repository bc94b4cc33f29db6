import {
  eventObjectRef,
  logFields,
  ServiceImportApi,
  type EventRecorder,
  type Logger,
} from '@cloudmap-mcs/core';
import type { ObjectMeta } from './k8s-types.js';
import {
  API_VERSION_OF,
  describeCollisions,
  REASON_NAME_COLLISION,
  type NameCollision,
} from './ownership.js';

export interface CollisionMetrics {
  /** Objects of others in the way of one import (0 removes the series). */
  nameCollisions?(namespace: string, name: string, count: number): void;
}

/**
 * Reports imports blocked by someone else's object: a Warning Event on that object and on our
 * ServiceImport (when there is one of ours), a per-import gauge, and one warn line when the
 * collision appears or changes (a blocked key is re-checked every few seconds; repeating the
 * line each time would flood the log). Memory: one entry per currently blocked import.
 */
export interface CollisionReporter {
  blocked(
    log: Logger,
    key: { namespace: string; name: string },
    collisions: readonly NameCollision[],
    ourImport: ObjectMeta | undefined,
  ): void;
  /** The import is not blocked (or gone): clears the gauge and says so once. */
  clear(log: Logger, key: { namespace: string; name: string }): void;
}

export function createCollisionReporter(deps: {
  events?: EventRecorder | undefined;
  metrics?: CollisionMetrics | undefined;
}): CollisionReporter {
  const reported = new Map<string, string>();
  return {
    blocked(log, { namespace, name }, collisions, ourImport) {
      const message = describeCollisions(collisions);
      deps.metrics?.nameCollisions?.(namespace, name, collisions.length);
      const id = `${namespace}/${name}`;
      if (reported.get(id) !== message) {
        reported.set(id, message);
        log.warn('import blocked by an object the import agent does not own', {
          [logFields.reason]: REASON_NAME_COLLISION,
          detail: message,
        });
      }
      for (const c of collisions) {
        deps.events?.record({
          regarding: eventObjectRef(
            { apiVersion: API_VERSION_OF[c.kind], kind: c.kind },
            { namespace, name: c.name, uid: c.uid },
          ),
          type: 'Warning',
          reason: REASON_NAME_COLLISION,
          action: 'Import',
          note: `the import ${id} from the clusterset needs this name; this object is not managed by the import agent and is left untouched (${c.detail}). The import stays blocked until it is deleted or renamed.`,
        });
      }
      if (ourImport !== undefined) {
        deps.events?.record({
          regarding: eventObjectRef(ServiceImportApi, { namespace, name, uid: ourImport.uid }),
          type: 'Warning',
          reason: REASON_NAME_COLLISION,
          action: 'Import',
          note: message,
        });
      }
    },
    clear(log, { namespace, name }) {
      const id = `${namespace}/${name}`;
      if (!reported.has(id)) return;
      reported.delete(id);
      deps.metrics?.nameCollisions?.(namespace, name, 0);
      log.info('name collision resolved: the import proceeds');
    },
  };
}
