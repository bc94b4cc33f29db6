import { Counter, Gauge, type Registry } from 'prom-client';

export interface ExportMetrics {
  exports(count: number): void;
  /** A revision check found another cluster's change to an exported service. */
  peerChange(): void;
  /** A change feed write ended (success, duplicate, throttled, error). */
  feedWrite(result: string): void;
  /** A peer watch round ran. */
  peerRound(): void;
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
    help: 'Peer watch rounds run (each: a revision check of the change feed, and of services it cannot vouch for).',
    registers: [registry],
  });
  return {
    peerRound: () => peerRounds.inc(),
    peerChange: () => peerChanges.inc(),
    feedWrite: (result) => feedWrites.inc({ result }),
    exports: (n) => managed.set(n),
  };
}
