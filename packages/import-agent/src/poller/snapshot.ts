import type { CloudMapInstance } from '@cloudmap-mcs/core';

/**
 * What the poller last read from Cloud Map for one service. When a read fails the previous
 * instances stay (the import agent never deletes because of its own errors); `error` says
 * what went wrong and since when, for logs, metrics and the readiness message.
 */
export interface ServiceSnapshot {
  namespace: string;
  name: string;
  /** Instances of our clusterset as of the last successful DiscoverInstances. */
  instances: readonly CloudMapInstance[];
  /** The InstancesRevision that came with `instances`; undefined before the first read. */
  revision?: number;
  fetchedAtMs?: number;
  error?: { message: string; sinceMs: number };
}

/** A read-only view of the poller's state, for reconcilers. */
export interface CloudMapSnapshot {
  /** True once one complete pass (lists and every service's instances) has succeeded. */
  readonly synced: boolean;
  get(namespace: string, name: string): ServiceSnapshot | undefined;
  /** Every tracked service of a namespace (the heartbeat service excluded). */
  services(namespace: string): ServiceSnapshot[];
  /** Every tracked service of every namespace (heartbeat services excluded). */
  allServices(): ServiceSnapshot[];
  /** Heartbeat instances of a namespace (`_mcs-heartbeat`), last good read. */
  heartbeats(namespace: string): readonly CloudMapInstance[];
  health(): SnapshotHealth;
}

export interface SnapshotHealth {
  /** False while Cloud Map cannot be read; the last good state is still served. */
  reachable: boolean;
  /** Human-readable, for /readyz and logs. */
  message: string;
  /** ms since the epoch of the last fully successful pass. */
  lastGoodMs?: number;
  /** Services whose last read failed. */
  failingServices: number;
}

/** Identical instance lists (order-insensitive): a resync that finds no change enqueues nothing. */
export function sameInstances(
  a: readonly CloudMapInstance[],
  b: readonly CloudMapInstance[],
): boolean {
  if (a.length !== b.length) return false;
  const key = (i: CloudMapInstance): string =>
    `${i.id}\u0000${Object.entries(i.attributes)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('\u0000')}`;
  const keys = new Set(a.map(key));
  return b.every((i) => keys.has(key(i)));
}
