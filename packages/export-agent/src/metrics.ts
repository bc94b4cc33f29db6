import { Counter, Gauge, type Registry } from 'prom-client';

export interface ExportMetrics {
  exports: (count: number) => void;
  /** A revision check found another cluster's change to an exported service. */
  peerChange: () => void;
  /** A change feed write ended (success, duplicate, throttled, error). */
  feedWrite: (result: string) => void;
  peerRound: () => void;
  /** A namespace's heartbeat was written, or could not be checked or written. */
  heartbeatRenewal: (result: 'success' | 'failure') => void;
  /** After a heartbeat sync: when the oldest heartbeat this agent keeps was renewed (wall ms). */
  heartbeatCurrent: (renewedAtMs: number) => void;
}

/**
 * The export agent's own metrics (docs/export-agent.md#metrics-metrics); reconcile and queue metrics
 * come from core's controller harness (`mcs_reconcile_*`, `workqueue_*`), Cloud Map call
 * metrics from the client. Counters go to `registry` (a standby's stay flat); the data gauges
 * to `leaderRegistry`, served only while this replica leads (core's agent-metrics.ts).
 */
export function createExportMetrics(registry: Registry, leaderRegistry: Registry): ExportMetrics {
  const managed = new Gauge({
    name: 'mcs_export_managed_exports',
    help: 'ServiceExports this agent currently exports to Cloud Map.',
    registers: [leaderRegistry],
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
  const renewals = new Counter({
    name: 'mcs_export_heartbeat_renewals_total',
    help:
      'Heartbeat renewals per namespace by result: success (RegisterInstance accepted), failure ' +
      '(the heartbeat could not be read or written). A current heartbeat is not rewritten.',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of ['success', 'failure']) renewals.inc({ result }, 0);
  const lastSuccessName = 'mcs_export_heartbeat_last_success_timestamp_seconds';
  const lastSuccess = new Gauge({
    name: lastSuccessName,
    help:
      'Unix time the oldest heartbeat this agent keeps was renewed at (written, or read back ' +
      'current); the last sync time when it exports nothing. Its age grows only while renewals fail.',
    // Registered at its first value: before the first sync it would read 0 (an age of decades).
    registers: [],
  });
  return {
    peerRound: () => peerRounds.inc(),
    peerChange: () => peerChanges.inc(),
    feedWrite: (result) => feedWrites.inc({ result }),
    exports: (n) => managed.set(n),
    heartbeatRenewal: (result) => renewals.inc({ result }),
    heartbeatCurrent: (ms) => {
      if (leaderRegistry.getSingleMetric(lastSuccessName) === undefined)
        leaderRegistry.registerMetric(lastSuccess);
      lastSuccess.set(ms / 1000);
    },
  };
}
