import type { ClusterExport } from '@cloudmap-mcs/core';
import { namespaceDecision, type NamespacePolicy } from '../reconcile/scope.js';
import { externalStatus, type ReadyState } from './status.js';
import { isProblem, selectionOf, type Problem, type Selection } from './selection.js';
import type { ExternalRead } from './translate.js';
import type { ExternalObject, ExternalStatus } from './types.js';

/**
 * What the external controller keeps per CloudMapServiceImport key, and the pure decisions
 * over it: what blocks the import, what is imported, what the Ready condition says.
 */
export interface Entry {
  obj: ExternalObject;
  selection?: Selection;
  specProblem?: Problem;
  /** The last successful read of this generation. */
  good?: { generation: number; read: ExternalRead };
  /** Why the latest read failed (kept data is served meanwhile). */
  readProblem?: Problem | undefined;
  /** Hash of what exportFor last answered, to notify only on change. */
  answered: string;
  /** The status as we last wrote or saw it. */
  status?: ExternalStatus;
  lastWarning?: string | undefined;
}

/** `answered` before anything was imported. */
export const NOTHING_ANSWERED = 'none';

export interface EntryScope {
  namespaces: NamespacePolicy;
  /** MCS exports of the clusterset use `namespace/name`: they win, the selection waits. */
  exportedByClusterset(namespace: string, name: string): boolean;
}

/** The entry for a new or changed object, keeping what the previous one learnt. */
export function nextEntry(obj: ExternalObject, before: Entry | undefined): Entry {
  const parsed = selectionOf(obj);
  return {
    obj,
    answered: before?.answered ?? NOTHING_ANSWERED,
    ...(before?.good === undefined ? {} : { good: before.good }),
    ...(before?.lastWarning === undefined ? {} : { lastWarning: before.lastWarning }),
    ...(obj.status === undefined ? {} : { status: obj.status }),
    ...(isProblem(parsed) ? { specProblem: parsed } : { selection: parsed }),
  };
}

/** True when the selection (or its spec problem) differs: it must be read at once. */
export function selectionChanged(before: Entry | undefined, after: Entry): boolean {
  return (
    before === undefined ||
    JSON.stringify(before.selection ?? before.specProblem) !==
      JSON.stringify(after.selection ?? after.specProblem)
  );
}

/** Why nothing (or only kept data) is imported for this entry now; undefined when fine. */
export function blocker(e: Entry, scope: EntryScope): Problem | undefined {
  if (e.specProblem !== undefined) return e.specProblem;
  const { namespace, name } = e.obj.metadata;
  const decision = namespaceDecision(scope.namespaces, namespace);
  if (!decision.allowed) return { reason: 'NamespaceDenied', message: decision.why };
  if (scope.exportedByClusterset(namespace, name))
    return {
      reason: 'Conflict',
      message: `${namespace}/${name} is exported by clusters of the clusterset; their exports are imported and this selection is not`,
    };
  return undefined;
}

/** The read of the current generation, if any. */
function goodRead(e: Entry): Entry['good'] {
  return e.good?.generation === e.selection?.generation ? e.good : undefined;
}

/** What is imported under the entry's key now. */
export function currentExport(e: Entry, scope: EntryScope): ClusterExport | undefined {
  if (e.selection === undefined || blocker(e, scope) !== undefined) return undefined;
  return goodRead(e)?.read.export;
}

export function readyOf(e: Entry, scope: EntryScope): ReadyState {
  const block = blocker(e, scope);
  if (block !== undefined) return { status: 'False', ...block };
  const good = goodRead(e);
  if (good?.read.problem !== undefined && e.readProblem === undefined)
    return { status: 'False', ...good.read.problem };
  if (e.readProblem !== undefined) {
    const kept = good?.read.export?.endpoints.length;
    return {
      status: 'False',
      reason: e.readProblem.reason,
      message:
        kept === undefined
          ? e.readProblem.message
          : `${e.readProblem.message}; keeping the ${String(kept)} endpoint(s) read before`,
    };
  }
  if (good === undefined || e.selection === undefined)
    return { status: 'False', reason: 'Pending', message: 'waiting for the first read' };
  const c = good.read.counts;
  const notes = [
    `${String(c.healthy)} healthy, ${String(c.unhealthy)} unhealthy (not ready), ${String(c.refused)} refused instance(s) of ${e.selection.cloudMapNamespace}/${e.selection.cloudMapService}`,
    ...good.read.notes,
  ];
  return { status: 'True', reason: 'Imported', message: notes.join('; ') };
}

/** The status to write (undefined: unchanged) for a Ready state. */
export function statusOf(e: Entry, ready: ReadyState, nowIso: string): ExternalStatus | undefined {
  const good = goodRead(e);
  return externalStatus(
    e.status,
    {
      ready,
      generation: e.obj.metadata.generation ?? 0,
      ...(good === undefined ? {} : { counts: good.read.counts }),
    },
    nowIso,
  );
}

/**
 * Whether this Ready state deserves a Warning (once per reason until it is Ready again);
 * updates the entry's memory of the last warning.
 */
export function takeWarning(e: Entry, ready: ReadyState): boolean {
  if (ready.status === 'True') {
    e.lastWarning = undefined;
    return false;
  }
  if (ready.reason === 'Pending' || e.lastWarning === ready.reason) return false;
  e.lastWarning = ready.reason;
  return true;
}
