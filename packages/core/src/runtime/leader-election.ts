import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import { sleep } from '../workqueue/backoff.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from './lease-store.js';

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
  /**
   * Stops renewing and, if this replica still holds the Lease, releases it so another replica
   * takes over at once. An aborted `run` signal only stops renewing: the Lease stays held
   * until `stop`, so an agent releases it after its last write.
   */
  stop(): Promise<void>;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection
 * (client-node has none, test-infra.md §C.5): optimistic concurrency on resourceVersion,
 * expiry judged by *local* time since the record last changed (no clock-skew trust), and
 * release on shutdown by clearing the holder.
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

  /** One client-go tryAcquireOrRenew: true when we hold the Lease afterwards. */
  const tryAcquireOrRenew = async (): Promise<boolean> => {
    const now = wallNow();
    const mine = (prev?: LeaseRecord): LeaseRecord => ({
      holderIdentity: options.identity,
      leaseDurationSeconds: Math.ceil(leaseMs / 1000),
      acquireTime: prev?.holderIdentity === options.identity ? (prev.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions:
        prev === undefined
          ? 0
          : prev.holderIdentity === options.identity
            ? prev.leaseTransitions
            : prev.leaseTransitions + 1,
      ...(prev?.resourceVersion === undefined ? {} : { resourceVersion: prev.resourceVersion }),
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    });
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
      const durationMs =
        current.leaseDurationSeconds > 0 ? current.leaseDurationSeconds * 1000 : leaseMs;
      if (heldByOther && observedAt + durationMs > clock.now()) return false;
      observe(await options.store.update(mine(current)));
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

  const run = async (outer?: AbortSignal): Promise<void> => {
    const signal =
      outer === undefined ? stopping.signal : AbortSignal.any([outer, stopping.signal]);
    // Acquire: jittered retries so replicas started together do not collide every period.
    while (!signal.aborted) {
      if (await attempt()) break;
      if (!(await wait(retryMs * (1 + random() * 0.2), signal))) return;
    }
    if (signal.aborted) return;
    leading = true;
    holding = true;
    log.info('started leading', { [logFields.holderIdentity]: options.identity });
    const leadership = new AbortController();
    options.onStartedLeading(leadership.signal);
    // Renew: give up when no renewal succeeded within renewDeadline.
    let lastRenew = clock.now();
    let renewed = true;
    while (!signal.aborted) {
      if (!(await wait(renewed ? renewMs : retryMs, signal))) break;
      renewed = await attempt();
      if (renewed) lastRenew = clock.now();
      else if (clock.now() - lastRenew >= renewDeadlineMs) {
        log.error('leadership lost', {
          [logFields.holderIdentity]: observed?.holderIdentity ?? '',
        });
        holding = false;
        break;
      }
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
