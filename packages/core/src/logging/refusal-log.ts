import type { Clock } from '../workqueue/clock.js';
import { logFields } from './log-fields.js';
import type { Logger } from './logger.js';

/**
 * One place where everything an agent refuses (a hostile Cloud Map record, an address, a
 * namespace its policy denies, …) is counted and logged. Reconciles are level-triggered, so
 * the same refusal is decided again on every reconcile of its key: counting each decision
 * is right for the metric (it shows the volume), but logging each one floods the log (14,000
 * warn lines in 23 s in issue 11). So a refusal is logged once per distinct
 * (reason, subject) per interval, and the next line of that refusal says how many were
 * suppressed meanwhile.
 */
export interface Refused {
  /** A short, stable, metric-label-safe reason (`refused-address`, `namespace-denied`…). */
  reason: string;
  /**
   * What was refused, identifying it among others of the same reason (e.g.
   * `shop/cart c2 169.254.169.254`). Together with `reason` it is the de-duplication key.
   */
  subject: string;
  /** Extra fields for the log line (cluster id, detail…). */
  fields?: Record<string, unknown>;
}

export interface RefusalLog {
  /** Counts the refusal and logs it unless the same one was logged within the interval. */
  refused(refusal: Refused, logger?: Logger): void;
  /** Distinct refusals currently remembered (bounded by `maxKeys`). */
  readonly remembered: number;
}

export interface RefusalLogOptions {
  logger: Logger;
  clock: Clock;
  /** Counts every refusal decision (e.g. a `…_refused_total{reason}` counter). */
  count?: ((reason: string) => void) | undefined;
  /** A refusal is logged again at most this often. Default 10 minutes. */
  intervalMs?: number;
  /** Distinct refusals remembered; the oldest are forgotten beyond it. Default 10,000. */
  maxKeys?: number;
  /** Log message; default `refused`. */
  message?: string;
}

export const DEFAULT_REFUSAL_LOG_INTERVAL_MS = 10 * 60_000;

export function createRefusalLog(opts: RefusalLogOptions): RefusalLog {
  const intervalMs = opts.intervalMs ?? DEFAULT_REFUSAL_LOG_INTERVAL_MS;
  const maxKeys = opts.maxKeys ?? 10_000;
  const message = opts.message ?? 'refused';
  // Insertion order is logging order: re-inserting on each log line keeps the oldest first.
  const seen = new Map<string, { loggedAtMs: number; suppressed: number }>();

  return {
    refused(refusal, logger = opts.logger) {
      opts.count?.(refusal.reason);
      const key = `${refusal.reason}\u0000${refusal.subject}`;
      const now = opts.clock.now();
      const last = seen.get(key);
      if (last !== undefined && now - last.loggedAtMs < intervalMs) {
        last.suppressed++;
        return;
      }
      seen.delete(key);
      seen.set(key, { loggedAtMs: now, suppressed: 0 });
      // The oldest are forgotten beyond maxKeys (the one just set is the newest).
      for (const oldest of seen.keys()) {
        if (seen.size <= maxKeys) break;
        seen.delete(oldest);
      }
      logger.warn(message, {
        [logFields.reason]: refusal.reason,
        subject: refusal.subject,
        ...refusal.fields,
        ...(last === undefined || last.suppressed === 0
          ? {}
          : { repeatsSinceLastLog: last.suppressed }),
      });
    },
    get remembered() {
      return seen.size;
    },
  };
}
