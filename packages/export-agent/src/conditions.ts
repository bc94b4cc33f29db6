import type { Condition } from './k8s-types.js';

/** A condition as the reconciler wants it; lastTransitionTime is managed by `mergeConditions`. */
export type DesiredCondition = Omit<Condition, 'lastTransitionTime'>;

export const ConditionType = { Valid: 'Valid', Ready: 'Ready', Conflict: 'Conflict' } as const;

/**
 * Applies desired conditions onto the current list (apimachinery `SetStatusCondition`):
 * lastTransitionTime moves only when the status flips; conditions of other types are kept.
 * Returns whether anything changed, so the caller writes status only then (GUIDE.md rule 8).
 */
export function mergeConditions(
  current: readonly Condition[],
  desired: readonly DesiredCondition[],
  now: Date,
): { conditions: Condition[]; changed: boolean } {
  let changed = false;
  const conditions = current.map((c) => ({ ...c }));
  for (const want of desired) {
    const i = conditions.findIndex((c) => c.type === want.type);
    const existing = conditions[i];
    if (existing === undefined) {
      conditions.push({ ...want, lastTransitionTime: now.toISOString() });
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
      lastTransitionTime:
        existing.status === want.status ? existing.lastTransitionTime : now.toISOString(),
    };
  }
  return { conditions, changed };
}

export const findCondition = (
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined => conditions?.find((c) => c.type === type);
