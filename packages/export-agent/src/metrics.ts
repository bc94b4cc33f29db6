import { Counter, Gauge, type Registry } from 'prom-client';

export interface ExportMetrics {
  exports(count: number): void;
  /** A revision check found another cluster's change to an exported service. */
  peerChange(): void;
  /** A change feed write ended (success, duplicate, throttled, error). */
  feedWrite(result: string): void;
  /** A peer watch round ran, or was skipped while the import agent told of changes. */
  peerRound(outcome: 'ran' | 'skipped'): void;
  /** The import agent's ServiceImport told of another cluster's change to an export. */
  importAgentHint(): void;
  /** Whether the import agent's Lease is held and renewed (import-hints.ts). */
  importAgentLive(live: boolean): void;
  /** A nudge to an import agent: sent (2xx), failed, or refused (an address never contacted). */
  nudge(result: 'sent' | 'failed' | 'refused'): void;
}

/**
 * The export agent's own metrics; reconcile and queue metrics come from core's controller
 * harness (`mcs_reconcile_*`, `mcs_workqueue_*`), Cloud Map call metrics from the client.
 */
export function createExportMetrics(registry: Registry): ExportMetrics {
  const managed = new Gauge({
    name: 'mcs_export_managed_exports',
    help: 'ServiceExports this agent currently exports to Cloud Map.',
    registers: [registry],
  });
  const peerChanges = new Counter({
    name: 'mcs_export_peer_changes_total',
    help: "Revision moves of exported services noticed between reconciles (others' changes).",
    registers: [registry],
  });
  const feedWrites = new Counter({
    name: 'mcs_export_feed_writes_total',
    help: 'Change feed writes (RegisterInstance of this cluster’s feed instance) by result.',
    labelNames: ['result'],
    registers: [registry],
  });
  const peerRounds = new Counter({
    name: 'mcs_export_peer_rounds_total',
    help: 'Peer watch rounds: ran, or skipped while the import agent tells of other clusters’ changes.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const hints = new Counter({
    name: 'mcs_export_import_agent_hints_total',
    help: 'Exporters digest moves on ServiceImports of exported services (other clusters’ changes seen by the import agent).',
    registers: [registry],
  });
  const live = new Gauge({
    name: 'mcs_export_import_agent_live',
    help: '1 while this cluster’s import agent holds and renews its Lease (the peer watch then runs at --peer-check-hinted-seconds).',
    registers: [registry],
  });
  const nudges = new Counter({
    name: 'mcs_export_nudges_total',
    help: 'Nudges to import agents after change feed writes, by result: sent (answered 2xx), failed (no answer in 1 s, or refused by the agent), refused (an address this agent never contacts).',
    labelNames: ['result'],
    registers: [registry],
  });
  return {
    nudge: (result) => nudges.inc({ result }),
    peerRound: (outcome) => peerRounds.inc({ outcome }),
    importAgentHint: () => hints.inc(),
    importAgentLive: (on) => live.set(on ? 1 : 0),
    peerChange: () => peerChanges.inc(),
    feedWrite: (result) => feedWrites.inc({ result }),
    exports: (n) => managed.set(n),
  };
}
