import { decodeHeartbeats, heartbeatLivenessKey } from '@cloudmap-mcs/core';
import type { ServiceSnapshot } from './poller/snapshot.js';

/**
 * Which clusters were live, per namespace, when its imports were last all re-run (core
 * `heartbeatLivenessKey`). A heartbeat renewal that keeps every cluster live changes nothing
 * an import reads, so the controller re-runs a namespace's imports only when this says the
 * live set moved; expiries are re-checked by each reconcile's own requeue (converge.ts).
 */
export interface LivenessTracker {
  /** Records the live set of `namespace` from its heartbeat service; true when it moved. */
  changed(namespace: string, heartbeats: ServiceSnapshot | undefined): boolean;
}

export function createLivenessTracker(opts: {
  clustersetId: string;
  ttlMs: number;
  now: () => number;
}): LivenessTracker {
  const last = new Map<string, string>();
  return {
    changed(namespace, hb) {
      const key = heartbeatLivenessKey(
        decodeHeartbeats(hb?.instances ?? [], { clustersetId: opts.clustersetId }).heartbeats,
        hb?.confirmedAtMs ?? opts.now(),
        opts.ttlMs,
        hb?.resumedAtMs,
      );
      if (last.get(namespace) === key) return false;
      last.set(namespace, key);
      return true;
    },
  };
}
