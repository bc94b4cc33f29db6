import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ReconcileOutcome } from '@cloudmap-mcs/core';

export interface ExportMetrics {
  reconcile(outcome: ReconcileOutcome, durationMs: number): void;
  queueDepth(depth: number): void;
  exports(count: number): void;
  /** A revision check found another cluster's change to an exported service. */
  peerChange(): void;
}

/** The export agent's own metrics; Cloud Map call metrics come from the client. */
export function createExportMetrics(registry: Registry): ExportMetrics {
  const reconciles = new Counter({
    name: 'mcs_export_reconciles_total',
    help: 'Export reconciles by outcome (success, requeue, error, terminal).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mcs_export_reconcile_duration_seconds',
    help: 'Duration of export reconciles.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const depth = new Gauge({
    name: 'mcs_export_queue_depth',
    help: 'ServiceExport keys waiting in the work queue.',
    registers: [registry],
  });
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
  return {
    peerChange: () => peerChanges.inc(),
    reconcile(outcome, ms) {
      reconciles.inc({ outcome });
      duration.observe(ms / 1000);
    },
    queueDepth: (d) => depth.set(d),
    exports: (n) => managed.set(n),
  };
}
