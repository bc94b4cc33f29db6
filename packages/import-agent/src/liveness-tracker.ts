import {
  decodeHeartbeats,
  HEARTBEAT_SERVICE_NAME,
  heartbeatLiveness,
  type Clock,
  type RefusalLog,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import type { ServiceSnapshot } from './poller/snapshot.js';

/**
 * Which clusters are live in each namespace, as its imports were last run with (core
 * `heartbeatLiveness`, from when the poller saw each cluster's renewal change on its own
 * clock). The controller re-runs a namespace's imports only when that moves: a heartbeat
 * change that makes a cluster live or stale, or the expiry of a live cluster's heartbeat,
 * watched here once per namespace (in data time, like the reconciles: the check waits until
 * heartbeats that old can have been read). A renewal that keeps every cluster live, the
 * steady state, re-runs nothing. Heartbeat instances the decoder refuses (one whose id names
 * another cluster than its attributes, say) are counted and logged here, once per read.
 */
export interface LivenessTracker {
  /**
   * Reads the namespace's heartbeats now (after a change, or at start with `initial`):
   * calls `onChange` when the live set moved (never for `initial`), and watches the next
   * expiry.
   */
  observe(namespace: string, initial?: boolean): void;
  /** Clears the expiry timers. */
  stop(): void;
}

export interface LivenessTrackerOptions {
  clustersetId: string;
  ttlMs: number;
  clock: Clock;
  now: () => number;
  heartbeatService: (namespace: string) => ServiceSnapshot | undefined;
  onChange: (namespace: string) => void;
  refusals: RefusalLog;
}

/** Slack after an expiry, and the shortest re-check (as converge.ts had per service). */
const EXPIRY_SLACK_MS = 500;
const MIN_RECHECK_MS = 1_000;

export function createLivenessTracker(opts: LivenessTrackerOptions): LivenessTracker {
  const keys = new Map<string, string>();
  const timers = new Map<string, TimerHandle>();
  let stopped = false;
  const observe = (namespace: string, initial = false): void => {
    if (stopped) return;
    const hb = opts.heartbeatService(namespace);
    const asOfMs = hb?.confirmedAtMs ?? opts.now();
    reportRefused(opts, namespace, hb);
    const { key, nextExpiryMs } = heartbeatLiveness(
      hb?.renewalsSeen,
      asOfMs,
      opts.ttlMs,
      hb?.resumedAtMs,
    );
    const moved = keys.has(namespace) ? keys.get(namespace) !== key : !initial;
    keys.set(namespace, key);
    const pending = timers.get(namespace);
    if (pending !== undefined) opts.clock.clearTimer(pending);
    timers.delete(namespace);
    if (nextExpiryMs !== undefined) {
      const wait = Math.max(MIN_RECHECK_MS, nextExpiryMs - asOfMs + EXPIRY_SLACK_MS);
      timers.set(
        namespace,
        opts.clock.setTimer(() => {
          timers.delete(namespace);
          observe(namespace);
        }, wait),
      );
    }
    if (moved) opts.onChange(namespace);
  };
  return {
    observe,
    stop() {
      stopped = true;
      for (const t of timers.values()) opts.clock.clearTimer(t);
      timers.clear();
    },
  };
}

function reportRefused(
  opts: LivenessTrackerOptions,
  namespace: string,
  hb: ServiceSnapshot | undefined,
): void {
  const { rejected } = decodeHeartbeats(hb?.instances ?? [], { clustersetId: opts.clustersetId });
  for (const x of rejected) {
    opts.refusals.refused({
      reason: 'invalid-instance',
      subject: `${namespace}/${HEARTBEAT_SERVICE_NAME} - ${x.instanceId}`,
      fields: { detail: x.reason },
    });
  }
}
