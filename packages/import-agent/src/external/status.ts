import { findCondition, setConditions } from '@cloudmap-mcs/core';
import type { ExternalStatus } from './types.js';

/**
 * The status of a CloudMapServiceImport (pure): one Ready condition (core's setConditions),
 * the generation it is about and the instance counts of the last read. Written only when it
 * says something new, so a steady import writes nothing (docs/architecture.md#cost-model: zero
 * Kubernetes writes at idle).
 */

export interface ReadyState {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface DesiredExternalStatus {
  ready: ReadyState;
  generation: number;
  counts?: { healthy: number; unhealthy: number; refused: number };
}

/** The status to write, or undefined when the stored one already says the same. */
export function externalStatus(
  observed: ExternalStatus | undefined,
  want: DesiredExternalStatus,
  nowIso: string,
): ExternalStatus | undefined {
  const current = findCondition(observed?.conditions, 'Ready');
  const { conditions, changed } = setConditions(
    current === undefined ? [] : [current],
    [{ type: 'Ready', ...want.ready, observedGeneration: want.generation }],
    nowIso,
  );
  const sameCounts =
    JSON.stringify(observed?.instances ?? null) === JSON.stringify(want.counts ?? null);
  if (!changed && sameCounts && observed?.observedGeneration === want.generation) return undefined;
  return {
    observedGeneration: want.generation,
    ...(want.counts === undefined ? {} : { instances: want.counts }),
    conditions,
  };
}
