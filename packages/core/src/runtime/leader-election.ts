import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import { sleep, untilAborted } from '../workqueue/backoff.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from './lease-store.js';

export interface LeaderElectionOptions {
  store: LeaseStore;
  /** Unique per replica, e.g. the Pod name plus a random suffix. */
  identity: string;
  /** How long a Lease is valid without renewal. Default 15 s (client-go). */
  leaseDurationMs?: number;
  /** The leader steps down if no renewal succeeded for this long. Default 10 s (client-go). */
  renewDeadlineMs?: number;
  /** Between renewals, and between attempts to acquire. Default 2 s (client-go). */
  retryPeriodMs?: number;
  /**
   * Called once this replica leads. `signal` aborts when leadership ends (lost, or released
   * by `stop`): work started while leading must stop then (ADR 0020).
   */
  onStartedLeading: (signal: AbortSignal) => void;
  /** Called once when leadership is lost or released; agents normally exit then. */
  onStoppedLeading: () => void;
  logger: Logger;
  clock?: Clock;
  /** Wall time for the Lease's timestamps. */
  wallNow?: () => Date;
  random?: () => number;
}

export interface LeaderElector {
  /**
   * Campaigns until leading, then renews until leadership is lost or `stop` is called;
   * resolves then. `signal` stops a campaign only: once leading, the Lease is renewed until
   * `stop`, so an agent that is shutting down keeps it while it drains its writes.
   */
  run(signal?: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /**
   * Ends the campaign or the leadership (aborting the leading signal first) and, if this
   * replica still holds the Lease, releases it so another replica takes over at once.
   */
  stop(): Promise<void>;
}

/** Replicas started together spread their attempts over the last fifth of a retry period. */
const JITTER = 0.2;

/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics
 * (k8s.io/client-go/tools/leaderelection; @kubernetes/client-node has none,
 * docs/architecture.md#client-node-gaps):
 *
 * - A candidate takes the Lease only when it is free or expired: unchanged (same
 *   resourceVersion and holder) for its `leaseDurationSeconds`, judged by this replica's own
 *   clock since it last saw it change, never by the timestamps another replica wrote.
 * - Every write carries the resourceVersion it read; a 409 is a lost race, not an error.
 * - The leader renews every retry period and steps down when no renewal succeeded within the
 *   renew deadline of the start of the last successful one (a renewal that hangs counts as
 *   failed at the deadline). It has stopped leading by then, `leaseDuration - renewDeadline`
 *   before any other candidate can see the Lease expire: never two leaders.
 * - `stop` releases the Lease (holder cleared) so a standby takes over at once.
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
  const log = options.logger.child({ [logFields.lease]: options.store.description });
  const stopping = new AbortController();
  let leading = false;
  // We hold the Lease and have not released it (false once leadership was lost).
  let holding = false;
  let observed: LeaseRecord | undefined;
  let observedAt = 0;
  let lastLeader = '';
  let running: Promise<void> | undefined;

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
      }
    }
  };

  /** When the observed Lease expires for this replica (local clock). */
  const expiresAt = (r: LeaseRecord): number =>
    observedAt + (r.leaseDurationSeconds > 0 ? r.leaseDurationSeconds * 1000 : leaseMs);

  /** This replica as the holder, on top of `prev` (renewal) or as a new holder. */
  const mine = (prev?: LeaseRecord): LeaseRecord => {
    const now = wallNow();
    const renewing = prev?.holderIdentity === options.identity;
    return {
      holderIdentity: options.identity,
      leaseDurationSeconds: Math.ceil(leaseMs / 1000),
      acquireTime: renewing ? (prev.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions:
        prev === undefined ? 0 : renewing ? prev.leaseTransitions : prev.leaseTransitions + 1,
      ...(prev?.resourceVersion === undefined ? {} : { resourceVersion: prev.resourceVersion }),
    };
  };

  /**
   * One client-go tryAcquireOrRenew: true when this replica holds the Lease afterwards,
   * 'lost' when a leader finds another holder on it.
   */
  const tryAcquireOrRenew = async (): Promise<boolean | 'lost'> => {
    // Optimistic renewal (client-go): the leader writes on top of the record it wrote last,
    // one request instead of a GET and a PUT. Any failure (409 when someone else wrote, an
    // outage) falls back to reading the Lease.
    if (
      holding &&
      observed?.holderIdentity === options.identity &&
      expiresAt(observed) > clock.now()
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
      if (current.holderIdentity !== '' && current.holderIdentity !== options.identity) {
        if (holding) return 'lost';
        if (expiresAt(current) > clock.now()) return false;
      }
      observe(await options.store.update(mine(current)));
      return true;
    } catch (error) {
      if (error instanceof LeaseConflictError) return false;
      throw error;
    }
  };

  const wait = (ms: number, signal: AbortSignal): Promise<boolean> =>
    sleep(clock, Math.max(0, ms), signal).then(
      () => true,
      () => false,
    );

  /** One attempt, failed (false) if it has not answered by `deadline`: a hung request. */
  const attempt = async (deadline: number): Promise<boolean | 'lost'> => {
    const timer = new AbortController();
    try {
      return await Promise.race([
        tryAcquireOrRenew().catch((error: unknown) => {
          log.warn('lease update failed', { [logFields.error]: error });
          return false as const;
        }),
        wait(deadline - clock.now(), timer.signal).then(() => false as const),
      ]);
    } finally {
      timer.abort();
    }
  };

  /** Tries until this replica holds the Lease: when the winning attempt started, or undefined. */
  const campaign = async (signal: AbortSignal): Promise<number | undefined> => {
    while (!signal.aborted) {
      const startedAt = clock.now();
      if ((await attempt(startedAt + renewDeadlineMs)) === true) return startedAt;
      // Next try within a retry period, or when the Lease seen expires if that is sooner: a
      // killed leader is replaced at most a lease duration plus a retry period after its
      // last renewal.
      let nextIn = retryMs * (1 - random() * JITTER);
      const untilExpiry =
        observed === undefined || observed.holderIdentity === ''
          ? 0
          : expiresAt(observed) - clock.now();
      if (untilExpiry > 0) nextIn = Math.min(nextIn, untilExpiry);
      if (!(await wait(nextIn, signal))) return undefined;
    }
    return undefined;
  };

  const run = async (outer?: AbortSignal): Promise<void> => {
    const campaignSignal =
      outer === undefined ? stopping.signal : AbortSignal.any([outer, stopping.signal]);
    // Deadlines count from when the last successful write was sent: it cannot have reached
    // the API server earlier, so the others' expiry clocks started no earlier either.
    let renewedAt = await campaign(campaignSignal);
    if (renewedAt === undefined) return;
    leading = true;
    holding = true;
    log.info('started leading', { [logFields.holderIdentity]: options.identity });
    const leadership = new AbortController();
    options.onStartedLeading(leadership.signal);
    // Renew every retry period; step down when none succeeded since renewDeadline ago.
    while (!stopping.signal.aborted) {
      if (!(await wait(retryMs, stopping.signal))) break;
      const startedAt = clock.now();
      const result =
        startedAt < renewedAt + renewDeadlineMs
          ? await attempt(renewedAt + renewDeadlineMs)
          : false;
      if (stopping.signal.aborted) break;
      if (result === true) {
        renewedAt = startedAt;
        continue;
      }
      if (result === 'lost' || clock.now() >= renewedAt + renewDeadlineMs) {
        log.error('leadership lost', {
          [logFields.holderIdentity]: observed?.holderIdentity ?? '',
          [logFields.reason]:
            result === 'lost'
              ? 'another holder on the Lease'
              : 'no renewal within the renew deadline',
        });
        holding = false;
        break;
      }
    }
    leading = false;
    leadership.abort(new Error('leadership ended'));
    options.onStoppedLeading();
  };

  return {
    run(signal) {
      running ??= run(signal);
      return running;
    },
    isLeader: () => leading,
    async stop() {
      stopping.abort();
      await running;
      if (!holding) return;
      holding = false;
      // Release: clear the holder so a standby acquires without waiting for expiry.
      try {
        const current = await options.store.get();
        if (current?.holderIdentity === options.identity) {
          await options.store.update({
            ...current,
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

/** What a call through `leaderOnly` throws once leadership has ended. */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
}

/**
 * `target` (a port or writer: an object of methods) bound to leadership: once `leading`
 * aborts, a call throws LeadershipLostError, and a call still in flight rejects with it at
 * once, so the reconcile or timer that made it stops there instead of going on to its next
 * write. (The request already sent is not recalled; nothing new is sent.)
 *
 * Each call listens for the abort only while it is in flight (`untilAborted`): racing every
 * call against one promise of the end of leadership kept every result a leader ever got
 * (docs/adr/0016-agent-memory.md, decision 14).
 */
export function leaderOnly<T extends object>(target: T, leading: AbortSignal): T {
  const lost = (): LeadershipLostError =>
    new LeadershipLostError('leadership lost: this replica no longer writes', {
      cause: leading.reason,
    });
  const bound: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(target)) {
    bound[name] =
      typeof value !== 'function'
        ? value
        : (...args: unknown[]): unknown => {
            if (leading.aborted) throw lost();
            const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
            return result instanceof Promise ? untilAborted(result, leading, lost) : result;
          };
  }
  return bound as T;
}
