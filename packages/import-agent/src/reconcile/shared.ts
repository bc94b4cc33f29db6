import { realClock, type Clock, type RefusalLog } from '@cloudmap-mcs/core';
import { createCollisionReporter, type CollisionReporter } from './collisions.js';
import { createImportEvents, type ImportEvents } from './import-events.js';
import type { ImportWriter } from './ports.js';
import { createRecentWrites, type RecentWrites } from './recent-writes.js';
import type { ImportReconcilerDeps } from './reconciler.js';
import {
  createImportAdmission,
  DEFAULT_IMPORT_CAPS,
  defaultNamespacePolicy,
  recordRefusals,
  type ImportAdmission,
  type NamespacePolicy,
} from './scope.js';
import { createRecordingWriter } from './view.js';

/** What every reconcile of this reconciler shares: the writer, caches' overlay, policies. */
export interface Shared {
  deps: ImportReconcilerDeps;
  clock: Clock;
  recent: RecentWrites;
  writer: ImportWriter;
  refusals: RefusalLog;
  policy: NamespacePolicy;
  admission: ImportAdmission;
  collisions: CollisionReporter;
  /** Warning Events on ServiceImports: refused records, stale clusters, caps. */
  events: ImportEvents;
}

export function sharedParts(deps: ImportReconcilerDeps): Shared {
  const clock = deps.clock ?? realClock;
  const recent = deps.recent ?? createRecentWrites(clock);
  return {
    deps,
    clock,
    recent,
    writer: createRecordingWriter(deps.writer, recent, deps.metrics),
    refusals: deps.refusals ?? recordRefusals(deps.logger, clock, deps.metrics?.refused),
    policy: deps.namespaces ?? defaultNamespacePolicy,
    admission: createImportAdmission(deps.caps ?? DEFAULT_IMPORT_CAPS, () =>
      deps.sources.managedImportKeys(),
    ),
    collisions: createCollisionReporter(deps),
    events: createImportEvents(deps.events),
  };
}
