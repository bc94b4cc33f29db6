import { conflictConditionReason, type ConflictReport } from '@cloudmap-mcs/core';
import type { DesiredCondition } from '@cloudmap-mcs/core';
import type { InvalidReason } from './desired.js';

/**
 * The three mcs-api conditions (KEP-1645: Valid, Ready, Conflict) for one outcome of a
 * reconcile (docs/export-agent.md#conditions-mcs-api); `setConditions` is core's.
 */
export type ExportOutcome =
  | { kind: 'invalid'; reason: InvalidReason; message: string }
  | { kind: 'failed'; message: string }
  | { kind: 'pending'; message: string; conflicts?: ConflictReport; sharding?: DesiredCondition }
  | { kind: 'exported'; message: string; conflicts: ConflictReport; sharding?: DesiredCondition };

const noConflicts = (generation: number | undefined, message: string): DesiredCondition =>
  cond('Conflict', 'False', 'NoConflicts', message, generation);

function cond(
  type: string,
  status: DesiredCondition['status'],
  reason: string,
  message: string,
  generation: number | undefined,
): DesiredCondition {
  const c: DesiredCondition = { type, status, reason, message };
  if (generation !== undefined) c.observedGeneration = generation;
  return c;
}

export function conditionsFor(outcome: ExportOutcome, generation?: number): DesiredCondition[] {
  /** The Sharded condition (shard-status.ts), with this generation, when there is one. */
  const sharded = (c: DesiredCondition | undefined): DesiredCondition[] =>
    c === undefined ? [] : [cond(c.type, c.status, c.reason, c.message, generation)];
  const valid = cond('Valid', 'True', 'Valid', 'Service is exportable.', generation);
  const conflict = (report: ConflictReport | undefined): DesiredCondition =>
    report === undefined || report.reasons.length === 0
      ? noConflicts(generation, report?.message ?? 'No conflicts.')
      : cond('Conflict', 'True', conflictConditionReason(report), report.message, generation);
  switch (outcome.kind) {
    case 'invalid':
      return [
        cond('Valid', 'False', outcome.reason, outcome.message, generation),
        cond(
          'Ready',
          'False',
          outcome.reason === 'NoService' ? 'Pending' : 'Failed',
          'Not exported: the ServiceExport is not valid.',
          generation,
        ),
        noConflicts(generation, 'Not exported.'),
      ];
    case 'failed':
      return [valid, cond('Ready', 'False', 'Failed', outcome.message, generation)];
    case 'pending':
      return [
        valid,
        cond('Ready', 'False', 'Pending', outcome.message, generation),
        ...(outcome.conflicts === undefined ? [] : [conflict(outcome.conflicts)]),
        ...sharded(outcome.sharding),
      ];
    case 'exported':
      return [
        valid,
        cond('Ready', 'True', 'Exported', outcome.message, generation),
        conflict(outcome.conflicts),
        ...sharded(outcome.sharding),
      ];
  }
}
