import {
  applyHeartbeats,
  decodeServiceInstances,
  logFields,
  trustExport,
  trustInstances,
  type ClusterExport,
  type Logger,
  type Refusal,
  type RefusalLog,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import type { CloudMapSnapshot, ServiceSnapshot } from '../poller/snapshot.js';

/**
 * What Cloud Map says one service should import: its records from the poller's snapshot,
 * trusted and decoded, with clusters whose heartbeat expired dropped (docs/architecture.md#heartbeats).
 */

export interface ExportReading {
  snapshot: CloudMapSnapshot;
  trust: TrustPolicy;
  heartbeatTtlMs: number;
  refusals: RefusalLog;
  /** Whether this cluster exports `namespace/name` (records claiming our id count only then). */
  exportedHere(namespace: string, name: string): boolean;
  /** Whether this cluster's ServiceExport of it went within UNEXPORT_GRACE_MS. */
  unexportedLately?(namespace: string, name: string): boolean;
  /** Wall-clock ms, when nothing was ever read. */
  now(): number;
}

/**
 * How long after a local ServiceExport is deleted records claiming this cluster are taken
 * for our export agent's, still going, rather than someone else's (`own-cluster-id` is then
 * not reported): its finalizer holds the ServiceExport until Cloud Map removed them, and the
 * poller reads them gone within a feed period or a check period (seconds).
 */
export const UNEXPORT_GRACE_MS = 60_000;

export type LiveExports = ReturnType<typeof applyHeartbeats> & {
  /** The data time heartbeat ages were judged at. */
  asOfMs: number;
};

/**
 * The trusted exports of one service that are alive: a cluster is live while the poller saw
 * its heartbeat renewal change within the TTL (its own clock, never the writer's). Ages are
 * judged as of the last successful read of the heartbeats (never the wall clock across our
 * own outage, issue 11); without a heartbeat service, as of the last successful read of this
 * service.
 */
export function liveExports(
  r: ExportReading,
  log: Logger,
  namespace: string,
  name: string,
): LiveExports {
  const heartbeatService = r.snapshot.heartbeatService(namespace);
  const entry = r.snapshot.get(namespace, name);
  const asOfMs = heartbeatService?.confirmedAtMs ?? entry?.confirmedAtMs ?? r.now();
  const live = applyHeartbeats(
    entry === undefined ? [] : trustedExports(r, log, entry),
    heartbeatService?.renewalsSeen,
    asOfMs,
    r.heartbeatTtlMs,
    { firstSeenMs: entry?.clustersFirstSeenMs, resumedAtMs: heartbeatService?.resumedAtMs },
  );
  return { ...live, asOfMs };
}

/** Trusted, decoded exports of one service (refusals logged and counted one by one). */
function trustedExports(r: ExportReading, log: Logger, entry: ServiceSnapshot): ClusterExport[] {
  const { namespace, name } = entry;
  const service = `${namespace}/${name}`;
  const shape = trustInstances(service, entry.instances);
  report(r.refusals, log, shape.refusals);
  const decoded = decodeServiceInstances(namespace, name, shape.instances, {
    clustersetId: r.trust.clustersetId,
  });
  report(
    r.refusals,
    log,
    decoded.rejected.map((x) => ({
      reason: 'invalid-instance',
      service,
      subject: x.instanceId,
      detail: x.reason,
    })),
  );
  const out: ClusterExport[] = [];
  const local = {
    localExport: r.exportedHere(namespace, name),
    unexporting: r.unexportedLately?.(namespace, name) === true,
  };
  for (const e of decoded.exports) {
    const trusted = trustExport(r.trust, e, local);
    report(r.refusals, log, trusted.refusals);
    if (trusted.value !== undefined) out.push(trusted.value);
  }
  return out;
}

function report(refusals: RefusalLog, log: Logger, list: readonly Refusal[]): void {
  for (const x of list) {
    refusals.refused(
      {
        reason: x.reason,
        subject: `${x.service} ${x.cluster ?? '-'} ${x.subject}`,
        fields: { [logFields.clusterId]: x.cluster, detail: x.detail },
      },
      log,
    );
  }
}
