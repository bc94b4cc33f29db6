import { setConditions, type DesiredCondition, type MergedImport } from '@cloudmap-mcs/core';
import type { ServiceImportStatus } from './k8s-types.js';
import { REASON_NAME_COLLISION } from './ownership.js';

/** What the Ready condition of a ServiceImport says (mcs-api v1beta1 reasons). */
export interface ReadyInput {
  merged: MergedImport;
  ips: string[];
  stale: string[];
  cloudMapReachable: boolean;
  /** Set when the derived Service could not be created for its IP families. */
  ipFamilyError?: string;
  /** Set when some exported IP families are not served here (Ready stays True). */
  ipFamilyNote?: string;
  /** Set when someone else's object holds a name the import needs (ownership.ts). */
  collisions?: string;
}

export function readyCondition(input: ReadyInput): DesiredCondition {
  const { merged } = input;
  const notes: string[] = [`imported from ${String(merged.clusters.length)} cluster(s)`];
  if (merged.conflicts.length > 0) {
    notes.push(
      `conflicts (${merged.conflicts.join(', ')}) resolved by the oldest export, from ${merged.winner}`,
    );
  }
  if (input.stale.length > 0)
    notes.push(`endpoints of ${input.stale.join(', ')} removed: heartbeat older than the TTL`);
  if (input.ipFamilyNote !== undefined) notes.push(input.ipFamilyNote);
  if (!input.cloudMapReachable) notes.push('Cloud Map unreachable: serving the last good state');
  const message = notes.join('; ');
  const notReady = (reason: string, why: string): DesiredCondition => ({
    type: 'Ready',
    status: 'False',
    reason,
    message: why,
  });
  if (input.collisions !== undefined)
    return notReady(REASON_NAME_COLLISION, `${input.collisions}; ${message}`);
  if (input.ipFamilyError !== undefined)
    return notReady('IPFamilyNotSupported', input.ipFamilyError);
  if (merged.spec.type === 'ClusterSetIP' && input.ips.length === 0)
    return notReady('Pending', `waiting for the clusterset IP; ${message}`);
  return { type: 'Ready', status: 'True', reason: 'Ready', message };
}

/**
 * The status to write, or undefined when the stored one already says the same (the
 * transition time only moves when the status value changes).
 */
export function desiredStatus(
  observed: ServiceImportStatus | undefined,
  clusters: readonly string[],
  ready: DesiredCondition,
  nowIso: string,
): ServiceImportStatus | undefined {
  // Only our Ready condition is written (server-side apply would otherwise take ownership of
  // conditions someone else set).
  const previous = (observed?.conditions ?? []).filter((c) => c.type === 'Ready');
  const { conditions, changed } = setConditions(previous, [ready], nowIso);
  const sameClusters =
    (observed?.clusters ?? []).map((c) => c.cluster).join(',') === clusters.join(',');
  if (sameClusters && !changed) return undefined;
  return { clusters: clusters.map((cluster) => ({ cluster })), conditions };
}
