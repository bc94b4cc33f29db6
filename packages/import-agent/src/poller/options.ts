import type { CloudMapPort, Clock, Logger } from '@cloudmap-mcs/core';
import type { PollPeriods } from './schedule.js';
import type { CloudMapSnapshot, SnapshotHealth } from './snapshot.js';

/**
 * slow: the listing; fast: the feed and per-service revision checks; refresh: one backstop
 * read of the service read longest ago; resync: every service read again (sweeps only).
 */
export type RoundKind = 'slow' | 'fast' | 'refresh' | 'resync';

export interface PollerMetrics {
  round?(kind: RoundKind, ok: boolean, durationMs: number): void;
  readError?(operation: string): void;
  /** The change feed asked for a sweep (reason: new-writer, new-epoch, gap, writer-gone, feed-gone). */
  feedSweep?(reason: string): void;
  /** A feed instance that could not be decoded (ignored). */
  feedRejected?(): void;
  /** A writer's feed record its heartbeat does not vouch for, per round (its services are checked one by one). */
  feedUnvouched?(reason: string): void;
  /**
   * After each listing and resync round: per Cloud Map namespace this agent imports from,
   * the wall time (ms) of its last good read (listed, and none of its services failing).
   */
  lastGood?(byNamespace: ReadonlyMap<string, number>): void;
}

export interface PollerOptions {
  port: CloudMapPort;
  clock: Clock;
  /** Wall-clock ms since the epoch, for `confirmedAtMs` and first-seen times (default Date.now). */
  now?: () => number;
  logger: Logger;
  clustersetId: string;
  periods: PollPeriods;
  /**
   * A heartbeat whose renewal this agent has not seen change for this long no longer vouches
   * for its cluster's feed record (default 120 s, the agent's `--heartbeat-ttl-seconds`).
   */
  heartbeatTtlMs?: number;
  /** Revision calls per second this agent may spend; stretches the per-service period. */
  requestBudgetPerSecond?: number | undefined;
  random?: () => number;
  /** Whether a namespace of that name exists in this cluster. */
  isLocalNamespace(name: string): boolean;
  onServiceChange(namespace: string, name: string): void;
  onHeartbeatChange(namespace: string): void;
  /** Called each time `synced` or reachability changes. */
  onHealthChange?(health: SnapshotHealth, synced: boolean): void;
  metrics?: PollerMetrics | undefined;
}

export interface Poller extends CloudMapSnapshot {
  start(): void;
  /** Stops scheduling and waits for the round in flight. */
  stop(): Promise<void>;
  /** Runs a slow round now (e.g. a namespace was created locally). */
  refreshNow(): Promise<void>;
  /** Services currently tracked, heartbeat services included. */
  readonly tracked: number;
  /** Tracked services the change feed vouches for (no per-service revision check). */
  readonly feedCovered: number;
}
