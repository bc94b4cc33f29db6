/**
 * One status condition vocabulary for ServiceExport and ServiceImport (metav1.Condition) and
 * one setter with apimachinery `SetStatusCondition` semantics, used by both agents and the CLI.
 */

/** Timestamps arrive as strings (raw JSON) or Dates (client-node's deserializer). */
export type Timestamp = string | Date;

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: Timestamp;
  observedGeneration?: number;
}

/** A condition as a reconciler wants it; `setConditions` manages lastTransitionTime. */
export type DesiredCondition = Omit<Condition, 'lastTransitionTime'>;

/**
 * Applies desired conditions onto the current list (apimachinery `SetStatusCondition`):
 * lastTransitionTime moves only when the status flips; conditions of other types are kept.
 * Returns whether anything changed, so the caller writes status only then
 * (docs/contributing.md#idempotence).
 */
export function setConditions(
  current: readonly Condition[],
  desired: readonly DesiredCondition[],
  now: Timestamp,
): { conditions: Condition[]; changed: boolean } {
  const stamp = now instanceof Date ? now.toISOString() : now;
  let changed = false;
  const conditions = current.map((c) => ({ ...c }));
  for (const want of desired) {
    const i = conditions.findIndex((c) => c.type === want.type);
    const existing = conditions[i];
    if (existing === undefined) {
      conditions.push({ ...want, lastTransitionTime: stamp });
      changed = true;
      continue;
    }
    const same =
      existing.status === want.status &&
      existing.reason === want.reason &&
      existing.message === want.message &&
      existing.observedGeneration === want.observedGeneration;
    if (same) continue;
    changed = true;
    conditions[i] = {
      ...want,
      lastTransitionTime: existing.status === want.status ? existing.lastTransitionTime : stamp,
    };
  }
  return { conditions, changed };
}

export const findCondition = (
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined => conditions?.find((c) => c.type === type);

/** Milliseconds since the epoch of a Kubernetes timestamp; 0 when absent or unparsable. */
export function toMs(ts: Timestamp | undefined): number {
  if (ts === undefined) return 0;
  const ms = ts instanceof Date ? ts.getTime() : Date.parse(ts);
  return Number.isFinite(ms) ? ms : 0;
}
