import type { CloudMapPort, Clock, Logger, Nudge } from '@cloudmap-mcs/core';
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
  /** A nudge's outcome (ADR 0018 decision 11): accepted, or unconfirmed after the retries. */
  nudge?(result: 'accepted' | 'invalid' | 'standby' | 'unconfirmed'): void;
  /** Whether the feed is polled at the nudged (slow) period now. */
  nudgesTrusted?(trusted: boolean): void;
  /** Writes that nudging writers made without nudging this agent (each a miss). */
  nudgesMissed?(count: number): void;
}

/** Nudges (ADR 0018 decision 11): the feed is polled at `nudgedFeedMs` while they are trusted. */
export interface PollerNudgeOptions {
  /** The scheduled feed period while nudges are trusted (nudge-trust.ts). */
  nudgedFeedMs: number;
  /** How long this agent's address must have been in its own cluster's feed record first. */
  settleMs: number;
  /** This agent's published address; undefined: it takes no nudges and is never trusted. */
  ownAddress: string | undefined;
  /** This cluster's id: its feed record is where its own address must show. */
  localClusterId: string;
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
  requestBudgetPerSecond?: number;
  /** Parallel Cloud Map calls per round. */
  concurrency?: number;
  random?: () => number;
  /** Whether a namespace of that name exists in this cluster. */
  isLocalNamespace(name: string): boolean;
  onServiceChange(namespace: string, name: string): void;
  onHeartbeatChange(namespace: string): void;
  /** Called each time `synced` or reachability changes. */
  onHealthChange?(health: SnapshotHealth, synced: boolean): void;
  metrics?: PollerMetrics;
  /** Absent: no nudges, the feed is polled at `periods.feedMs` always. */
  nudges?: PollerNudgeOptions;
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
  /**
   * Takes a nudge (already validated): checks the feed now. False when this poller takes no
   * nudges (no feed, or nudges off).
   */
  nudge(nudge: Nudge): boolean;
  /** Whether the feed is polled at the nudged period now. */
  readonly nudgesTrusted: boolean;
}
