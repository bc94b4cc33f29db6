import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import { sleep } from '../workqueue/backoff.js';
import { nudgeAddressProblem } from '../records/feed.js';
import { LEADER_PROBE_TIMEOUT_MS, probeLeader, type LeaderStatus } from './leader-probe.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from './lease-store.js';

/**
 * Quiet leadership (ADR 0019): where the holder answers `GET /leader` (`host:port` of its
 * health port). A Lease with it is confirmed by asking the holder, not by renewals.
 */
export const ANNOTATION_LEADER_ADDRESS = 'multicluster.cloudmap-mcs.io/leader-address';
/** A quiet holder's own lease duration, seconds: how long a challenger waits before taking over. */
export const ANNOTATION_LEADER_LEASE_SECONDS = 'multicluster.cloudmap-mcs.io/leader-lease-seconds';
/**
 * Written by a standby that could not confirm a quiet holder (`<identity> <time>`): the
 * holder answers by renewing once, which clears it; unanswered, the standby takes over.
 */
export const ANNOTATION_LEADER_CHALLENGE = 'multicluster.cloudmap-mcs.io/leader-challenge';
/**
 * The `leaseDurationSeconds` a quiet holder writes. Candidates that judge only by renewals
 * (client-go, our agents before ADR 0019, still running during a rolling upgrade) must not
 * take over a Lease that is never renewed; an hour outlasts any rollout, and a downgrade after
 * a quiet leader crashed waits at most that long (or deletes the Lease).
 */
export const QUIET_LEASE_SECONDS = 3600;

/**
 * A quiet holder's own lease duration from its `ANNOTATION_LEADER_LEASE_SECONDS`, in ms, or
 * undefined when absent or not a whole number of seconds up to `QUIET_LEASE_SECONDS`.
 */
export function quietLeaseMsOf(
  annotations: Record<string, string> | undefined,
): number | undefined {
  const seconds = Number(annotations?.[ANNOTATION_LEADER_LEASE_SECONDS]);
  return Number.isInteger(seconds) && seconds > 0 && seconds <= QUIET_LEASE_SECONDS
    ? seconds * 1000
    : undefined;
}

export interface LeaderElectionOptions {
  store: LeaseStore;
  /** Unique per replica, e.g. the Pod name plus a random suffix. */
  identity: string;
  /** How long a Lease is valid without renewal. Default 15 s (client-go). */
  leaseDurationMs?: number;
  /** The leader gives up if it cannot renew for this long. Default 10 s. */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire, and between renewals after one failed. Default 2 s. */
  retryPeriodMs?: number;
  /**
   * Time between renewals while they succeed. Default half the renew deadline (5 s), at
   * least the retry period: a held Lease is written 12 times a minute, not 30 (client-go
   * renews every retry period). Safe because the leader still gives up after renewDeadline
   * without a successful renewal, before the Lease can expire for another replica.
   */
  renewIntervalMs?: number;
  /** Annotations the holder writes on the Lease with every acquire and renewal. */
  annotations?: Record<string, string>;
  /**
   * Quiet leadership (ADR 0019): `host:port` where this replica answers `GET /leader` (see
   * `status`). The leader then writes its Lease only to acquire it and to answer a standby's
   * challenge, and confirms it by reading it every renew interval; standbys confirm the
   * holder by asking it. Without an address the leader renews every renew interval.
   */
  address?: string;
  /** Asks the holder at `address` whether it leads this Lease as `holder`; throws why not. */
  probe?: (address: string, holder: string) => Promise<void>;
  onStartedLeading: (signal: AbortSignal) => void;
  /** Called once when leadership is lost or released; agents normally exit then. */
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
  logger: Logger;
  clock?: Clock;
  /** Wall time for the Lease's timestamps. */
  wallNow?: () => Date;
  random?: () => number;
}

export interface LeaderElector {
  /** Campaigns until leading, then renews; resolves when leadership ends or `stop` is called. */
  run(signal?: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /** What `GET /leader` answers: which Lease, as whom, and whether this replica leads it now. */
  status(): LeaderStatus;
  /**
   * Stops renewing and, if this replica still holds the Lease, releases it so another replica
   * takes over at once. An aborted `run` signal only stops renewing: the Lease stays held
   * until `stop`, so an agent releases it after its last write.
   */
  stop(): Promise<void>;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection
 * (client-node has none, docs/architecture.md#client-node-gaps): optimistic concurrency on resourceVersion,
 * expiry judged by *local* time since the record last changed (no clock-skew trust), and
 * release on shutdown by clearing the holder.
 *
 * With an `address` it is quiet (ADR 0019): no write while nothing happens. The leader reads
 * its Lease every renew interval and steps down when no read since `renewDeadline` showed it
 * as the unchallenged holder. A standby asks the holder (`GET /leader`) every retry period;
 * after `leaseDuration - renewDeadline` without an answer it writes a challenge on the Lease,
 * and takes over (resourceVersion-guarded) when `leaseDuration` later the Lease is unchanged
 * and the holder still does not answer. A live holder answers a challenge by renewing, so a
 * replica that cannot reach the other costs a challenge and an answer, not a takeover. Safe
 * for the same reason as client-go: every confirmation after a challenge must be a write that
 * moves the resourceVersion, so an unchanged Lease `leaseDuration` after the challenge means
 * the holder has stopped leading `leaseDuration - renewDeadline` earlier.
 */
export function createLeaderElector(options: LeaderElectionOptions): LeaderElector {
  const clock = options.clock ?? realClock;
  const wallNow = options.wallNow ?? (() => new Date());
  const random = options.random ?? Math.random;
  const leaseMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const retryMs = options.retryPeriodMs ?? 2_000;
  if (!(leaseMs > renewDeadlineMs && renewDeadlineMs > retryMs && retryMs > 0))
    throw new RangeError('leader election needs leaseDuration > renewDeadline > retryPeriod > 0');
  const renewMs = Math.min(
    renewDeadlineMs - retryMs,
    Math.max(retryMs, options.renewIntervalMs ?? Math.floor(renewDeadlineMs / 2)),
  );
  const quiet = options.address !== undefined;
  /** A quiet holder unconfirmed this long is challenged. */
  const challengeAfterMs = Math.max(2 * retryMs, leaseMs - renewDeadlineMs);
  const probe =
    options.probe ??
    ((address: string, holder: string) =>
      probeLeader(
        address,
        { lease: options.store.description, identity: holder },
        LEADER_PROBE_TIMEOUT_MS,
      ));
  const log = options.logger.child({ [logFields.lease]: options.store.description });
  const stopping = new AbortController();
  let leading = false;
  // We hold the Lease and have not released it: stays true when the run ends because the
  // agent is shutting down (the Lease is kept, unrenewed, until `stop` releases it after the
  // agent's last write), false when leadership was lost.
  let holding = false;
  let observed: LeaseRecord | undefined;
  let observedAt = 0;
  let lastLeader = '';
  let running: Promise<void> | undefined;
  // A standby's view of a quiet holder.
  let holderTerm = '';
  let confirmedHolderAt = 0;
  let challenge: { resourceVersion: string; seenAt: number } | undefined;
  /** When a pending challenge may be acted on: the next attempt is then, not a retry later. */
  let challengeDueAt: number | undefined;
  let probeFailing = false;
  let answering = false;

  const observe = (r: LeaseRecord): void => {
    if (
      observed === undefined ||
      observed.resourceVersion !== r.resourceVersion ||
      observed.holderIdentity !== r.holderIdentity
    ) {
      observed = r;
      observedAt = clock.now();
    }
    if (r.holderIdentity !== lastLeader) {
      lastLeader = r.holderIdentity;
      if (r.holderIdentity !== '') {
        log.info('new leader observed', { [logFields.holderIdentity]: r.holderIdentity });
        options.onNewLeader?.(r.holderIdentity);
      }
    }
  };

  const ownAnnotations = (): Record<string, string> | undefined => {
    const all = {
      ...options.annotations,
      ...(options.address === undefined
        ? {}
        : {
            [ANNOTATION_LEADER_ADDRESS]: options.address,
            [ANNOTATION_LEADER_LEASE_SECONDS]: String(Math.ceil(leaseMs / 1000)),
          }),
    };
    return Object.keys(all).length === 0 ? undefined : all;
  };

  /** This replica as the holder, on top of `prev` (renewal) or as a new holder. */
  const mine = (prev?: LeaseRecord): LeaseRecord => {
    const now = wallNow();
    const annotations = ownAnnotations();
    return {
      holderIdentity: options.identity,
      leaseDurationSeconds: quiet ? QUIET_LEASE_SECONDS : Math.ceil(leaseMs / 1000),
      acquireTime: prev?.holderIdentity === options.identity ? (prev.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions:
        prev === undefined
          ? 0
          : prev.holderIdentity === options.identity
            ? prev.leaseTransitions
            : prev.leaseTransitions + 1,
      ...(prev?.resourceVersion === undefined ? {} : { resourceVersion: prev.resourceVersion }),
      ...(annotations === undefined ? {} : { annotations }),
    };
  };

  /**
   * A standby facing a quiet holder (one that publishes where it answers): confirm it by
   * asking, challenge it when that fails for a while, take over when a challenge stays
   * unanswered for a lease duration. True when this replica now holds the Lease.
   */
  const contestQuietHolder = async (current: LeaseRecord, address: string): Promise<boolean> => {
    const seenAt = clock.now();
    const holder = current.holderIdentity;
    // A new holder, a renewal or an answer to a challenge: the holder was alive then.
    const term = `${holder}|${String(current.acquireTime?.getTime())}|${String(current.renewTime?.getTime())}`;
    if (term !== holderTerm) {
      // Another holder starts with a clean slate: a streak of failed probes was the last one's.
      if (!holderTerm.startsWith(`${holder}|`)) probeFailing = false;
      holderTerm = term;
      confirmedHolderAt = seenAt;
    }
    let problem: string | undefined;
    let refused = false;
    try {
      await probe(address, holder);
      confirmedHolderAt = clock.now();
      if (probeFailing) log.info('leader answers again', { [logFields.holderIdentity]: holder });
      probeFailing = false;
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
      refused = (error as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
    }
    if (current.annotations?.[ANNOTATION_LEADER_CHALLENGE] !== undefined) {
      // Timed from when this replica first saw the challenge: never earlier than it was made.
      const pending =
        challenge !== undefined && challenge.resourceVersion === current.resourceVersion
          ? challenge
          : { resourceVersion: current.resourceVersion ?? '', seenAt };
      challenge = pending;
      const waitMs = Math.max(leaseMs, quietLeaseMsOf(current.annotations) ?? 0);
      challengeDueAt = pending.seenAt + waitMs;
      if (problem === undefined || clock.now() - pending.seenAt < waitMs) return false;
      log.warn('taking over: the leader answered neither probes nor the challenge', {
        [logFields.holderIdentity]: holder,
        [logFields.address]: address,
        [logFields.error]: problem,
      });
      observe(await options.store.update(mine(current)));
      return true;
    }
    challenge = undefined;
    // Nothing listens where the holder said it answers (its process is gone; its pod's IP,
    // or this host, still answers with a reset): challenged at once, so a killed leader is
    // replaced about a lease duration later, as a renewing one is. A timeout may be a busy
    // holder: it gets the grace. While probes keep failing (a network that separates the
    // replicas) the holder is only confirmed by answering challenges: one a lease duration.
    const unconfirmedMs = probeFailing ? leaseMs : refused ? 0 : challengeAfterMs;
    if (problem === undefined || clock.now() - confirmedHolderAt < unconfirmedMs) return false;
    const written = await options.store.update({
      ...current,
      annotations: {
        ...current.annotations,
        [ANNOTATION_LEADER_CHALLENGE]: `${options.identity} ${wallNow().toISOString()}`,
      },
    });
    observe(written);
    challenge = { resourceVersion: written.resourceVersion ?? '', seenAt: clock.now() };
    challengeDueAt = challenge.seenAt + leaseMs;
    // Once per streak, not at every challenge.
    if (!probeFailing)
      log.warn(
        'cannot confirm the leader at its address; challenged it on the Lease (allow traffic to the health port between replicas, or every confirmation costs two Lease writes)',
        {
          [logFields.holderIdentity]: holder,
          [logFields.address]: address,
          [logFields.error]: problem,
        },
      );
    probeFailing = true;
    return false;
  };

  /**
   * Where a quiet holder answers, if it is one: an IP literal and a port (nothing is resolved
   * because of what is written on a Lease); anything else is judged by renewals, as a holder
   * without an address is (warned once per value).
   */
  let refusedAddress: string | undefined;
  const quietAddressOf = (current: LeaseRecord): string | undefined => {
    const address = current.annotations?.[ANNOTATION_LEADER_ADDRESS];
    const problem = address === undefined ? undefined : nudgeAddressProblem(address);
    if (problem === undefined) return address;
    if (address !== refusedAddress)
      log.warn('the Lease holder publishes an unusable address; judged by its renewals', {
        [logFields.holderIdentity]: current.holderIdentity,
        [logFields.error]: problem,
      });
    refusedAddress = address;
    return undefined;
  };

  /** One client-go tryAcquireOrRenew: true when we hold the Lease afterwards. */
  const tryAcquireOrRenew = async (): Promise<boolean> => {
    // Fast path (client-go's optimistic renew): the leader writes on top of the record it
    // wrote last, one request instead of a GET and a PUT. Any failure (409 when someone else
    // wrote, an outage) falls back to the read-then-decide path below.
    if (
      holding &&
      observed?.holderIdentity === options.identity &&
      observedAt + leaseMs > clock.now()
    ) {
      try {
        observe(await options.store.update(mine(observed)));
        return true;
      } catch (error) {
        log.debug('optimistic lease renewal failed; reading the Lease', {
          [logFields.error]: error,
        });
      }
    }
    const current = await options.store.get();
    try {
      if (current === undefined) {
        observe(await options.store.create(mine()));
        return true;
      }
      observe(current);
      const heldByOther =
        current.holderIdentity !== '' && current.holderIdentity !== options.identity;
      if (heldByOther) {
        const address = quietAddressOf(current);
        if (address !== undefined && !holding) return await contestQuietHolder(current, address);
        const durationMs =
          current.leaseDurationSeconds > 0 ? current.leaseDurationSeconds * 1000 : leaseMs;
        if (observedAt + durationMs > clock.now()) return false;
      }
      observe(await options.store.update(mine(current)));
      return true;
    } catch (error) {
      if (error instanceof LeaseConflictError) return false;
      throw error;
    }
  };

  /**
   * The quiet leader's check: reading the Lease as its unchallenged holder confirms it; a
   * challenge is answered by renewing; another holder means leadership is lost.
   */
  const confirmQuietly = async (): Promise<boolean | 'lost'> => {
    const current = await options.store.get();
    try {
      if (current === undefined) {
        // Deleted by someone: recreate it, unless a standby already did.
        observe(await options.store.create(mine()));
        return true;
      }
      observe(current);
      if (current.holderIdentity !== options.identity) return 'lost';
      const challenger = current.annotations?.[ANNOTATION_LEADER_CHALLENGE];
      if (challenger === undefined) {
        answering = false;
        return true;
      }
      observe(await options.store.update(mine(current)));
      if (!answering)
        log.info('answered a challenge: a standby could not reach this replica', {
          challenger,
        });
      answering = true;
      return true;
    } catch (error) {
      if (error instanceof LeaseConflictError) return false;
      throw error;
    }
  };

  const attempt = async (): Promise<boolean> => {
    try {
      return await tryAcquireOrRenew();
    } catch (error) {
      log.warn('lease update failed', { [logFields.error]: error });
      return false;
    }
  };
  const wait = (ms: number, signal: AbortSignal): Promise<boolean> =>
    sleep(clock, ms, signal).then(
      () => true,
      () => false,
    );

  /**
   * One renewal or confirmation, given up (false) when it has not answered by `deadline`: a
   * hung request must not keep a replica leading past its renew deadline.
   */
  const keep = async (deadline: number, signal: AbortSignal): Promise<boolean | 'lost'> => {
    const bounded = new AbortController();
    const timeout = sleep(
      clock,
      Math.max(0, deadline - clock.now()),
      AbortSignal.any([signal, bounded.signal]),
    ).then(
      () => false as const,
      () => false as const,
    );
    const work = quiet
      ? confirmQuietly().catch((error: unknown) => {
          log.warn('lease read failed', { [logFields.error]: error });
          return false as const;
        })
      : attempt();
    try {
      return await Promise.race([work, timeout]);
    } finally {
      bounded.abort();
    }
  };

  const run = async (outer?: AbortSignal): Promise<void> => {
    const signal =
      outer === undefined ? stopping.signal : AbortSignal.any([outer, stopping.signal]);
    // Acquire: jittered retries so replicas started together do not collide every period.
    while (!signal.aborted) {
      challengeDueAt = undefined;
      if (await attempt()) break;
      // A challenge that falls due before the next retry is acted on when due; one already
      // due (the holder still answers probes) waits a retry period like anything else.
      const retryIn = retryMs * (1 + random() * 0.2);
      const dueIn =
        challengeDueAt === undefined || challengeDueAt <= clock.now()
          ? retryIn
          : challengeDueAt - clock.now();
      if (!(await wait(Math.min(retryIn, dueIn), signal))) return;
    }
    if (signal.aborted) return;
    leading = true;
    holding = true;
    log.info('started leading', {
      [logFields.holderIdentity]: options.identity,
      ...(quiet ? { [logFields.address]: options.address } : {}),
    });
    const leadership = new AbortController();
    options.onStartedLeading(leadership.signal);
    // Renew (or confirm): give up when none succeeded within renewDeadline of its start.
    let confirmedAt = clock.now();
    let confirmed = true;
    while (!signal.aborted) {
      if (!(await wait(confirmed ? renewMs : retryMs, signal))) break;
      const startedAt = clock.now();
      const result = await keep(confirmedAt + renewDeadlineMs, signal);
      if (signal.aborted) break;
      if (result === 'lost' || (result === false && clock.now() - confirmedAt >= renewDeadlineMs)) {
        log.error('leadership lost', {
          [logFields.holderIdentity]: observed?.holderIdentity ?? '',
        });
        holding = false;
        break;
      }
      confirmed = result;
      if (confirmed) confirmedAt = startedAt;
    }
    leading = false;
    leadership.abort();
    options.onStoppedLeading();
  };

  return {
    run(signal) {
      running ??= run(signal);
      return running;
    },
    isLeader: () => leading,
    status: () => ({
      lease: options.store.description,
      identity: options.identity,
      leading,
    }),
    async stop() {
      stopping.abort();
      await running;
      if (!holding) return;
      holding = false;
      // Release: clear the holder so a standby acquires without waiting for expiry.
      try {
        const current = await options.store.get();
        if (current?.holderIdentity === options.identity) {
          // Without the holder's annotations: they describe a leader that is going away.
          const { annotations: _dropped, ...released } = current;
          await options.store.update({
            ...released,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: wallNow(),
          });
          log.info('lease released');
        }
      } catch (error) {
        log.warn('lease release failed', { [logFields.error]: error });
      }
    },
  };
}
