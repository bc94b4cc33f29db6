/**
 * Timings of a fault-suite run. `fast` runs inside `make test` (seconds-long faults, short
 * TTLs and poll periods); `long` is `make chaos`: the agents' default settings and the
 * faults at their real length (a 10-minute Cloud Map outage, 2 minutes of throttling).
 */
export interface Profile {
  readonly name: 'fast' | 'long';
  /**
   * Import agent settings (flags, and test-only timings passed as MCS_TEST_TIMINGS) and the
   * values the assertions derive their bounds from.
   */
  readonly import: {
    readonly fastPollS: number;
    readonly slowPollS: number;
    /**
     * Period of the heartbeat services' reads (timing pollHeartbeatSeconds): heartbeat ages are
     * judged as of the last read, so evictions and returns wait for one.
     */
    readonly heartbeatPollS: number;
    readonly jitter: number;
    readonly ttlS: number;
    readonly args: readonly string[];
    /** IMPORT_TIMINGS overrides (docs/contributing.md#test-timings); empty: the defaults. */
    readonly timings: Readonly<Record<string, number>>;
  };
  /** Export agent settings. */
  readonly export: {
    readonly heartbeatS: number;
    readonly resyncS: number;
    readonly args: readonly string[];
    /** EXPORT_TIMINGS overrides; empty: the defaults. */
    readonly timings: Readonly<Record<string, number>>;
  };
  /** Lease timing of the failover scenario (the export agent's election flags). */
  readonly lease: { readonly durationS: number; readonly renewS: number; readonly retryS: number };
  readonly outageS: number;
  readonly throttleS: number;
  readonly throttleShare: number;
  readonly kills: number;
  readonly services: number;
  readonly endpointsPerService: number;
  readonly hostileServices: number;
  /**
   * What Kubernetes and the agents need beyond the poll period to carry a change through (watch
   * events, reconcile, apply) on a loaded 2-core machine; part of every convergence bound.
   */
  readonly slackS: number;
  /** Longest wait for a first import (a slow poll must find new services). */
  readonly setupTimeoutS: number;
}

export const fastProfile: Profile = {
  name: 'fast',
  import: {
    fastPollS: 1,
    slowPollS: 2,
    heartbeatPollS: 1,
    jitter: 0.1,
    // The export agent reads its own heartbeat through the Cloud Map client's 5 s cache, so a
    // live heartbeat can be period + period/3 + 5 s old (~8 s here): the TTL must exceed that.
    ttlS: 12,
    args: [
      '--poll-fast-seconds=1',
      '--heartbeat-ttl-seconds=12',
      '--leader-elect=false',
      '--log-level=info',
    ],
    timings: { pollSlowSeconds: 2, pollHeartbeatSeconds: 1, pollJitter: 0.1 },
  },
  export: {
    heartbeatS: 2,
    resyncS: 5,
    timings: { heartbeatSeconds: 2 },
    args: [
      '--resync-seconds=5',
      '--background-budget=0', // the 5 s resync is the profile's choice: not stretched
      '--register-rate=200',
      '--log-level=info',
    ],
  },
  lease: { durationS: 4, renewS: 3, retryS: 1 },
  outageS: 20,
  throttleS: 15,
  throttleShare: 0.5,
  kills: 5,
  services: 20,
  endpointsPerService: 5,
  hostileServices: 30,
  slackS: 5,
  setupTimeoutS: 90,
};

/** Agent defaults everywhere (import: fast 5 s, slow 60 s, heartbeats 30 s, TTL 120 s; export: heartbeat 30 s). */
export const longProfile: Profile = {
  name: 'long',
  import: {
    fastPollS: 5,
    slowPollS: 60,
    heartbeatPollS: 30,
    jitter: 0.1,
    ttlS: 120,
    args: ['--leader-elect=false', '--log-level=info'],
    timings: {},
  },
  export: { heartbeatS: 30, resyncS: 60, args: ['--log-level=info'], timings: {} },
  lease: { durationS: 15, renewS: 10, retryS: 2 },
  outageS: 600,
  throttleS: 120,
  throttleShare: 0.5,
  kills: 5,
  services: 100,
  endpointsPerService: 5,
  hostileServices: 200,
  slackS: 5,
  setupTimeoutS: 180,
};

export const profiles = { fast: fastProfile, long: longProfile } as const;

/** One fast poll period at its longest (jitter added). */
export const fastPeriodS = (p: Profile): number => p.import.fastPollS * (1 + p.import.jitter);

/** One heartbeat check period at its longest (jitter added). */
export const heartbeatPeriodS = (p: Profile): number =>
  p.import.heartbeatPollS * (1 + p.import.jitter);

/** The profile with the agents' --log-level replaced (debugging a scenario). */
export function withAgentLogLevel(p: Profile, level: string | undefined): Profile {
  if (level === undefined) return p;
  const set = (args: readonly string[]) => [
    ...args.filter((a) => !a.startsWith('--log-level')),
    `--log-level=${level}`,
  ];
  return {
    ...p,
    import: { ...p.import, args: set(p.import.args) },
    export: { ...p.export, args: set(p.export.args) },
  };
}
