import type { V1Lease } from '@kubernetes/client-node';
import { nudgeAddressProblem, sleep, type Clock, type Logger } from '@cloudmap-mcs/core';
import {
  ANNOTATION_LEADER_ADDRESS,
  LEADER_PROBE_TIMEOUT_MS,
  probeLeader,
  quietLeaseMsOf,
} from '@cloudmap-mcs/core/runtime';

/** How often a quiet import agent leader is asked whether it still leads. */
const PROBE_PERIOD_MS = 5_000;

/** Renewals may arrive this much later than the Lease's duration before it counts as lapsed. */
const LEASE_SLACK_MS = 5_000;

const timeMs = (t: Date | string | undefined): number =>
  t === undefined ? Number.NaN : new Date(t).getTime();

/**
 * Whether a Lease is held by a live holder (pure: tested on its own). A renewing holder is live
 * while renewals arrive: one counts when it is seen (this process's clock); a Lease first seen
 * is judged by its renewTime, the holder's wall clock, once. A quiet holder (ADR 0019: it
 * publishes `ANNOTATION_LEADER_ADDRESS` and is never renewed) is live while it answers
 * `GET /leader` (`confirm`) or has just taken or renewed the Lease; a standby's challenge,
 * which changes the Lease but not its holder or times, is no sign of life.
 */
export interface LeaseLiveness {
  observe(event: 'add' | 'update' | 'delete', lease: V1Lease): void;
  /** `holder` answered that it leads the Lease, now. */
  confirm(holder: string): void;
  /** Whom to ask, and where, while a quiet holder holds the Lease. */
  quietHolder(): { holder: string; address: string } | undefined;
  live(): boolean;
}

export function createLeaseLiveness(clock: Clock, wallNow: () => number): LeaseLiveness {
  let version: string | undefined;
  let term: string | undefined;
  let holder = '';
  let address: string | undefined;
  /** When the holder was last seen alive (clock ms); undefined: not held, or not yet. */
  let renewedAtMs: number | undefined;
  let durationMs = 15_000;
  return {
    observe(event, lease) {
      const spec = lease.spec;
      holder = event === 'delete' ? '' : (spec?.holderIdentity ?? '');
      const held = holder !== '';
      const published = lease.metadata?.annotations?.[ANNOTATION_LEADER_ADDRESS];
      address =
        held && published !== undefined && nudgeAddressProblem(published) === undefined
          ? published
          : undefined;
      durationMs =
        address === undefined
          ? (spec?.leaseDurationSeconds ?? 15) * 1000
          : (quietLeaseMsOf(lease.metadata?.annotations) ?? 15_000);
      const seen = lease.metadata?.resourceVersion;
      const seenTerm = `${holder}|${String(timeMs(spec?.acquireTime))}|${String(timeMs(spec?.renewTime))}`;
      if (!held) renewedAtMs = undefined;
      else if (version === undefined) {
        // First seen: a quiet holder is asked (its renewTime is when it took the Lease, maybe
        // long ago); a renewing one is judged by how recent its last renewal is.
        const age = wallNow() - timeMs(spec?.renewTime ?? spec?.acquireTime);
        renewedAtMs =
          address === undefined && age < durationMs + LEASE_SLACK_MS
            ? clock.now() - Math.max(0, age)
            : undefined;
      } else if (address === undefined ? seen !== version : seenTerm !== term)
        renewedAtMs = clock.now();
      version = event === 'delete' ? undefined : seen;
      term = seenTerm;
    },
    confirm(answered) {
      if (answered !== '' && answered === holder) renewedAtMs = clock.now();
    },
    quietHolder: () => (address === undefined ? undefined : { holder, address }),
    live: () =>
      renewedAtMs !== undefined && clock.now() - renewedAtMs < durationMs + LEASE_SLACK_MS,
  };
}

export interface QuietHolderOptions {
  leaseNamespace: string;
  leaseName: string;
  clock: Clock;
  logger: Logger;
  /** Asks a quiet holder whether it leads (default: `probeLeader` over HTTP); throws why not. */
  probe?: (address: string, holder: string) => Promise<void>;
}

/**
 * Asks a quiet import agent leader (ADR 0019) whether it leads, every `PROBE_PERIOD_MS` and
 * at once on `now()`; one request at a time. `after` runs after each answer or period.
 */
export function askQuietHolder(
  opts: QuietHolderOptions,
  liveness: LeaseLiveness,
  after: () => void,
): { now(): void; start(): void; stop(): Promise<void> } {
  const { clock, logger } = opts;
  const lease = `${opts.leaseNamespace}/${opts.leaseName}`;
  const probe =
    opts.probe ??
    ((address: string, holder: string) =>
      probeLeader(address, { lease, identity: holder }, LEADER_PROBE_TIMEOUT_MS));
  const stopping = new AbortController();
  let probing: Promise<void> | undefined;
  let looping: Promise<void> | undefined;
  let problem: string | undefined;
  const ask = (): Promise<void> => {
    probing ??= (async () => {
      const target = liveness.quietHolder();
      if (target === undefined) return;
      try {
        await probe(target.address, target.holder);
        liveness.confirm(target.holder);
        problem = undefined;
      } catch (error) {
        // Once per streak: a dead holder fails every 5 s until a standby takes over.
        if (problem === undefined)
          logger.info('import agent leader does not answer', {
            lease,
            address: target.address,
            problem: error instanceof Error ? error.message : String(error),
          });
        problem = error instanceof Error ? error.message : String(error);
      }
    })().finally(() => {
      probing = undefined;
      after();
    });
    return probing;
  };
  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      if (liveness.quietHolder() !== undefined) await ask();
      else after(); // a renewing holder lapses without an event
      try {
        await sleep(clock, PROBE_PERIOD_MS, stopping.signal);
      } catch {
        return;
      }
    }
  };
  return {
    now: () => void ask(),
    start: () => {
      looping ??= loop();
    },
    async stop() {
      stopping.abort();
      await Promise.all([looping, probing]);
    },
  };
}
