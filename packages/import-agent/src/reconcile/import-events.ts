import {
  eventObjectRef,
  ServiceImportApi,
  type EventRecorder,
  type Refused,
  type RefusalLog,
} from '@cloudmap-mcs/core';

// Warning Events on a ServiceImport (docs/import-agent.md#events), beside NameCollision
// (collisions.ts). Reconciles are level-triggered, so the same Event is decided on every
// reconcile of its key: each note depends only on the situation (sorted, no times or counts
// of decisions), and core's event recorder drops an Event identical to one recorded for the
// same object within 10 minutes, as client-go's correlator aggregates them.

/** Subjects named in one note; the rest are counted. */
const MAX_SUBJECTS = 5;

export interface ImportRef {
  namespace: string;
  name: string;
  /** Our ServiceImport's uid, when it exists. */
  uid?: string;
}

/** A refusal log that also keeps what one reconcile refused, for its Events. */
export interface CollectingRefusals extends RefusalLog {
  readonly collected: readonly Refused[];
}

export function collectRefusals(shared: RefusalLog): CollectingRefusals {
  const collected: Refused[] = [];
  return {
    refused(refusal, logger) {
      collected.push(refusal);
      shared.refused(refusal, logger);
    },
    get remembered() {
      return shared.remembered;
    },
    collected,
  };
}

export interface ImportEvents {
  /** One Event per reason among the records this import's reconcile refused. */
  refused(ref: ImportRef, refusals: readonly Refused[]): void;
  /** The clusters whose endpoints this import dropped for an expired heartbeat. */
  stale(ref: ImportRef, clusters: readonly string[], ttlMs: number): void;
  /** The import is not created: a cap is reached. */
  capped(ref: ImportRef, why: string): void;
}

export function createImportEvents(events: EventRecorder | undefined): ImportEvents {
  const record = (ref: ImportRef, reason: string, note: string): void =>
    events?.record({
      regarding: eventObjectRef(ServiceImportApi, ref),
      type: 'Warning',
      reason,
      action: 'Import',
      note,
    });
  return {
    refused(ref, refusals) {
      const byReason = Map.groupBy(refusals, (r) => r.reason);
      for (const [reason, some] of [...byReason].sort(([a], [b]) => a.localeCompare(b))) {
        const subjects = [...new Set(some.map((r) => r.subject))].sort();
        const more = subjects.length - MAX_SUBJECTS;
        const listed = subjects.slice(0, MAX_SUBJECTS).join('; ');
        record(
          ref,
          'RecordsRefused',
          `${String(subjects.length)} Cloud Map record(s) or part(s) refused (${reason}): ${listed}${more > 0 ? `; and ${String(more)} more` : ''}. They are not imported; the agent's log line "refused cloud map record" has the detail.`,
        );
      }
    },
    stale(ref, clusters, ttlMs) {
      if (clusters.length === 0) return;
      record(
        ref,
        'ClusterStale',
        `endpoints of cluster(s) ${clusters.join(', ')} dropped: no heartbeat renewal seen for ${String(Math.round(ttlMs / 1000))} s (their export agent is down, denied or cut off from Cloud Map). They return at the next renewal.`,
      );
    },
    capped(ref, why) {
      record(
        ref,
        'ImportCapReached',
        `not imported: ${why}. Raise the cap (chart: importAgent.maxImports, maxImportsPerNamespace) if this many imports are expected; retried every minute.`,
      );
    },
  };
}
