import { findCondition, setConditions, type Logger } from '@cloudmap-mcs/core';
import { conditionsFor, type ExportOutcome } from './export-status.js';
import type { ServiceExportObject } from './k8s-types.js';
import type { ReconcilerState } from './reconciler-state.js';

/**
 * Writes the ServiceExport's conditions for this outcome (only when they change) and the
 * Events of the transitions.
 */
export async function writeStatus(
  state: ReconcilerState,
  se: ServiceExportObject,
  outcome: ExportOutcome,
  log: Logger,
): Promise<void> {
  const { deps, events } = state;
  const current = se.status?.conditions ?? [];
  const desired = conditionsFor(outcome, se.metadata.generation);
  const { conditions, changed } = setConditions(current, desired, deps.now());
  if (!changed) return;
  await deps.writer.writeConditions(se, conditions);
  log.debug('status written', { outcome: outcome.kind });
  // Events mark transitions only, so a steady state does not flood the event stream.
  const before = findCondition(current, 'Conflict');
  const after = findCondition(conditions, 'Conflict');
  if (after?.status === 'True' && (before?.status !== 'True' || before.reason !== after.reason)) {
    events.event(se, 'Warning', 'ExportConflict', `${after.reason}: ${after.message}`);
  }
  const ready = findCondition(conditions, 'Ready');
  const wasReady = findCondition(current, 'Ready');
  if (outcome.kind === 'failed' && wasReady?.message !== ready?.message) {
    events.event(se, 'Warning', 'ExportFailed', outcome.message);
  }
  if (outcome.kind === 'invalid' && findCondition(current, 'Valid')?.reason !== outcome.reason) {
    events.event(se, 'Warning', outcome.reason, outcome.message);
  }
  if (outcome.kind === 'exported' && wasReady?.status !== 'True') {
    events.event(se, 'Normal', 'Exported', outcome.message);
  }
}
