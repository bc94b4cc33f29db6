import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ImportControllerOptions } from './controller.js';
import type { SnapshotHealth } from './poller/snapshot.js';

type ControllerMetrics = NonNullable<ImportControllerOptions['metrics']> & {
  externalReads(outcome: string): void;
};

/**
 * The import agent's own metrics (docs/import-agent.md#metrics-metrics); reconcile and queue metrics
 * come from core's controller harness (`mcs_reconcile_*`, `workqueue_*`), Cloud Map call
 * metrics from the client. Counters go to `registry` (a standby's stay flat); the data gauges
 * to `leaderRegistry`, served only while this replica leads (core's agent-metrics.ts).
 */
export function createImportMetrics(
  registry: Registry,
  leaderRegistry: Registry,
): ControllerMetrics {
  // Registered in this order (the order of /metrics).
  const registers = [registry];
  const leader = [leaderRegistry];
  return {
    ...writeMetrics(registers),
    ...pollMetrics(registers),
    ...healthMetrics(leader),
    ...importStateMetrics(leader, registers),
  };
}

type Registers = Registry[];

/** Refused records and Kubernetes writes. */
function writeMetrics(registers: Registers) {
  const refused = new Counter({
    name: 'mcs_import_refused_records_total',
    help: 'Cloud Map records or parts refused by validation, by reason.',
    labelNames: ['reason'],
    registers,
  });
  const writes = new Counter({
    name: 'mcs_import_k8s_writes_total',
    help: 'Kubernetes writes by kind and verb.',
    labelNames: ['kind', 'verb'],
    registers,
  });
  return {
    refused: (reason: string) => refused.inc({ reason }),
    written: (kind: string, verb: string) => writes.inc({ kind, verb }),
  } satisfies Partial<ControllerMetrics>;
}

/** The poller's rounds, the change feed and failed reads. */
function pollMetrics(registers: Registers) {
  const rounds = new Counter({
    name: 'mcs_import_poll_rounds_total',
    help: 'Poller rounds by kind (slow, fast, resync) and outcome.',
    labelNames: ['kind', 'outcome'],
    registers,
  });
  const roundDuration = new Histogram({
    name: 'mcs_import_poll_round_duration_seconds',
    help: 'Poller round latency by kind.',
    labelNames: ['kind'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers,
  });
  const feedSweeps = new Counter({
    name: 'mcs_import_feed_sweeps_total',
    help: 'Full reads the change feed asked for, by reason (gap: a record skipped past what was read).',
    labelNames: ['reason'],
    registers,
  });
  const feedRejected = new Counter({
    name: 'mcs_import_feed_rejected_total',
    help: 'Change feed instances that could not be decoded and were ignored.',
    registers,
  });
  const feedUnvouched = new Counter({
    name: 'mcs_import_feed_unvouched_rounds_total',
    help:
      "Feed rounds in which a writer's record was not vouched for by its heartbeat, by reason " +
      '(no-heartbeat, heartbeat-expired, epoch-mismatch, seq-ahead, seq-behind): its services are checked one by one.',
    labelNames: ['reason'],
    registers,
  });
  const readErrors = new Counter({
    name: 'mcs_import_cloudmap_read_errors_total',
    help: 'Failed Cloud Map reads (after retries) by operation; the last good state is kept.',
    labelNames: ['operation'],
    registers,
  });
  return {
    round: (kind: string, ok: boolean, ms: number) => {
      rounds.inc({ kind, outcome: ok ? 'success' : 'error' });
      roundDuration.observe({ kind }, ms / 1000);
    },
    readError: (operation: string) => readErrors.inc({ operation }),
    feedSweep: (reason: string) => feedSweeps.inc({ reason }),
    feedRejected: () => feedRejected.inc(),
    feedUnvouched: (reason: string) => feedUnvouched.inc({ reason }),
  } satisfies Partial<ControllerMetrics>;
}

/** The snapshot's health: reachable, synced, last good read per namespace, failing services. */
function healthMetrics(registers: Registers) {
  // Registered at the first health report (the leader's first poll round): before it they
  // would read 0, an outage that is not one.
  const reachable = new Gauge({
    name: 'mcs_import_cloudmap_reachable',
    help: '1 when the last poll rounds succeeded, 0 while serving the last good state.',
    registers: [],
  });
  const synced = new Gauge({
    name: 'mcs_import_cloudmap_synced',
    help: '1 once a complete Cloud Map snapshot was read.',
    registers: [],
  });
  const lastGood = new Gauge({
    name: 'mcs_import_cloudmap_last_good_timestamp_seconds',
    help:
      'Unix time of the last good read of each Cloud Map namespace this agent imports from ' +
      '(listed, and none of its services failing).',
    labelNames: ['cloudmap_namespace'],
    registers,
  });
  const failing = new Gauge({
    name: 'mcs_import_cloudmap_failing_services',
    help: 'Services whose last read failed (served from the last good state).',
    registers: [],
  });
  let shown = false;
  return {
    health: (h: SnapshotHealth, isSynced: boolean) => {
      if (!shown) for (const g of [reachable, synced, failing]) registers[0]?.registerMetric(g);
      shown = true;
      reachable.set(h.reachable ? 1 : 0);
      synced.set(isSynced ? 1 : 0);
      failing.set(h.failingServices);
    },
    lastGood: (byNamespace: ReadonlyMap<string, number>) => {
      // Namespaces no longer imported from go (cardinality: the namespaces imported from).
      lastGood.reset();
      for (const [ns, ms] of byNamespace) lastGood.set({ cloudmap_namespace: ns }, ms / 1000);
    },
  } satisfies Partial<ControllerMetrics>;
}

/** Per import: stale clusters and name collisions; reads of external services. */
function importStateMetrics(registers: Registers, counters: Registers) {
  const stale = new Gauge({
    name: 'mcs_import_stale_clusters',
    help: 'Source clusters whose endpoints were dropped for an expired heartbeat, per import.',
    labelNames: ['namespace', 'name'],
    registers,
  });
  const collisions = new Gauge({
    name: 'mcs_import_name_collisions',
    help: 'Objects not created by the import agent holding a name an import needs (the import is blocked), per import.',
    labelNames: ['namespace', 'name'],
    registers,
  });
  const externalReads = new Counter({
    name: 'mcs_import_external_reads_total',
    help: 'Reads of user-selected non-Kubernetes Cloud Map services (CloudMapServiceImport), by outcome.',
    labelNames: ['outcome'],
    registers: counters,
  });
  return {
    externalReads: (outcome: string) => externalReads.inc({ outcome }),
    nameCollisions: (namespace: string, name: string, count: number) => {
      if (count === 0) collisions.remove({ namespace, name });
      else collisions.set({ namespace, name }, count);
    },
    staleClusters: (namespace: string, name: string, count: number) => {
      if (count === 0) stale.remove({ namespace, name });
      else stale.set({ namespace, name }, count);
    },
  } satisfies Partial<ControllerMetrics>;
}
