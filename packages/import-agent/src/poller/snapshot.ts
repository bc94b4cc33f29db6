import { sortedRecord, type CloudMapInstance, type RenewalSightings } from '@cloudmap-mcs/core';

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
  /**
   * Wall time (ms since the epoch) of the last successful read that showed `instances` are
   * still current: a DiscoverInstances, or a DiscoverInstancesRevision that had not moved.
   * The data is known good as of this time, and no later: while Cloud Map cannot be read it
   * stays put, so heartbeat ages judged against it never count the importer's own blind
   * period (issue 11 item 1).
   */
  confirmedAtMs?: number;
  /**
   * Wall time reads of this service succeeded again after failing (the end of this
   * importer's latest blind period for it); undefined when no read failed since start. A
   * Cloud Map outage usually blinds the exporters too: their heartbeats cannot be renewed
   * while it lasts, so right after it they look old for reasons that say nothing about them.
   */
  resumedAtMs?: number;
  /**
   * Per cluster id (the CLUSTER_ID attribute of its instances): the wall time this poller
   * first read a record of that cluster in this service, to age clusters that never wrote a
   * heartbeat. Clusters no longer present are forgotten.
   */
  clustersFirstSeenMs?: Readonly<Record<string, number>>;
  /**
   * The heartbeat service only: per cluster, its renewal value and when this poller saw it
   * change (core `sightRenewals`; same wall clock as `confirmedAtMs`). Liveness is judged from
   * these, never from the writer's clock. Clusters whose heartbeat is gone are forgotten.
   */
  renewalsSeen?: RenewalSightings;
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
  /** The `_mcs-heartbeat` service of a namespace (instances and when they were confirmed). */
  heartbeatService(namespace: string): ServiceSnapshot | undefined;
  health(): SnapshotHealth;
}

export interface SnapshotHealth {
  /**
   * False while Cloud Map cannot be read at all (a round made calls and none succeeded); the
   * last good state is still served. Back to true on the first successful call.
   */
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
  const key = (i: CloudMapInstance): string => JSON.stringify([i.id, sortedRecord(i.attributes)]);
  const keys = new Set(a.map(key));
  return b.every((i) => keys.has(key(i)));
}
