import { decodeHeartbeats, heartbeatsChangeLiveness, type Heartbeat } from '@cloudmap-mcs/core';
import type { ServiceSnapshot } from './poller/snapshot.js';

/**
 * The heartbeats of each namespace as its imports last saw them. A heartbeat renewal that
 * keeps every cluster live changes nothing an import reads, so the controller re-runs a
 * namespace's imports only when this says which clusters are live moved (core
 * `heartbeatsChangeLiveness`); expiries are re-checked by each reconcile's own requeue
 * (converge.ts).
 */
export interface LivenessTracker {
  /** Records the heartbeats of `namespace`; true when they change which clusters are live. */
  changed(namespace: string, heartbeats: ServiceSnapshot | undefined): boolean;
}

export function createLivenessTracker(opts: {
  clustersetId: string;
  ttlMs: number;
  now: () => number;
}): LivenessTracker {
  const last = new Map<string, { heartbeats: Heartbeat[]; resumedAtMs: number | undefined }>();
  return {
    changed(namespace, hb) {
      const heartbeats = decodeHeartbeats(hb?.instances ?? [], {
        clustersetId: opts.clustersetId,
      }).heartbeats;
      const before = last.get(namespace);
      last.set(namespace, { heartbeats, resumedAtMs: hb?.resumedAtMs });
      if (before === undefined || before.resumedAtMs !== hb?.resumedAtMs) return true;
      return heartbeatsChangeLiveness(
        before.heartbeats,
        heartbeats,
        hb?.confirmedAtMs ?? opts.now(),
        opts.ttlMs,
        hb?.resumedAtMs,
      );
    },
  };
}
