import { randomBytes } from 'node:crypto';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from './clock.js';
import { noopControllerMetrics, type ControllerMetrics } from './metrics.js';
import { createWorkQueue, type WorkQueue } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/** What a reconcile asks for when it succeeds. */
export interface ReconcileResult {
  /** Run the key again after this long (periodic re-check), with backoff reset. */
  requeueAfterMs?: number;
}

/** What the harness hands each reconcile: its child logger `{controller, key, reconcileId}`. */
export interface ReconcileContext {
  readonly logger: Logger;
  /** `run`'s signal: aborted when the work must stop (leadership lost). */
  readonly signal?: AbortSignal;
}

/** `ctx` is absent only when a test calls a reconciler directly, without the harness. */
export type Reconciler<K> = (key: K, ctx?: ReconcileContext) => Promise<ReconcileResult | void>;

/**
 * An error that retrying cannot fix (a user error, a refused input). The controller reports
 * it and forgets the key instead of backing off (docs/contributing.md#bad-input).
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

export interface ControllerOptions<K> {
  /** The root kind in lower case (`serviceexport`): the `controller` log field and metric label. */
  name: string;
  reconcile: Reconciler<K>;
  workers: number;
  clock: Clock;
  logger: Logger;
  /** Shared by every controller of a process (one registry); labelled by `name`. */
  metrics?: ControllerMetrics | undefined;
  /** Default: client-go's controller limiter (per-key backoff and an overall bucket). */
  rateLimiter?: RateLimiter<K>;
  /** After each reconcile, once it is logged and counted (e.g. "first pass done"). */
  onResult?: (key: K, outcome: ReconcileOutcome, durationMs: number) => void;
  /** Tests pin it; default 8 random hex digits. */
  newReconcileId?: () => string;
}

/**
 * A work queue and the workers that drain it (docs/contributing.md#reconcile-shape): the one place a
 * reconcile's outcome is logged and counted. Informer callbacks add keys to `queue`.
 */
export interface Controller<K> {
  readonly queue: WorkQueue<K>;
  /**
   * Starts the workers; resolves once the queue is shut down and every worker finished its
   * key. `signal` (controller-runtime's context: leadership) shuts the queue down when it
   * aborts and reaches every reconcile as `ctx.signal`.
   */
  run(signal?: AbortSignal): Promise<void>;
  /** Stops taking keys and waits for the keys in flight. */
  stop(): Promise<void>;
}

export function createController<K>(opts: ControllerOptions<K>): Controller<K> {
  const metrics = opts.metrics ?? noopControllerMetrics;
  const queue = createWorkQueue<K>({
    clock: opts.clock,
    rateLimiter: opts.rateLimiter ?? defaultControllerRateLimiter<K>(opts.clock),
    metrics: metrics.queue<K>(opts.name, opts.clock),
  });
  const log = opts.logger.child({ [logFields.controller]: opts.name });
  const newId = opts.newReconcileId ?? (() => randomBytes(4).toString('hex'));
  let running: Promise<void> | undefined;
  let signal: AbortSignal | undefined;

  const reconcileOnce = async (key: K): Promise<void> => {
    const keyLog = log.child({ [logFields.key]: key, [logFields.reconcileId]: newId() });
    const started = opts.clock.now();
    let outcome: ReconcileOutcome;
    try {
      const result = await opts.reconcile(key, {
        logger: keyLog,
        ...(signal === undefined ? {} : { signal }),
      });
      queue.forget(key);
      if (result?.requeueAfterMs === undefined) {
        outcome = 'success';
      } else {
        queue.addAfter(key, result.requeueAfterMs);
        outcome = 'requeue';
      }
    } catch (error) {
      if (error instanceof TerminalError) {
        queue.forget(key);
        outcome = 'terminal';
      } else {
        queue.addRateLimited(key);
        outcome = 'error';
      }
      // The one place a reconcile error is logged (docs/contributing.md#config-and-logs).
      keyLog.error('reconcile failed', { [logFields.outcome]: outcome, [logFields.error]: error });
    }
    const durationMs = opts.clock.now() - started;
    metrics.reconciled(opts.name, outcome, durationMs / 1000);
    opts.onResult?.(key, outcome, durationMs);
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (signal?.aborted === true) {
        // Leadership ended: what is still queued is the next leader's work.
        queue.done(key);
        continue;
      }
      try {
        await reconcileOnce(key);
      } finally {
        queue.done(key);
      }
    }
  };

  return {
    queue,
    run(runSignal) {
      if (running === undefined && runSignal !== undefined) {
        signal = runSignal;
        if (runSignal.aborted) queue.shutdown();
        else runSignal.addEventListener('abort', () => queue.shutdown(), { once: true });
      }
      running ??= Promise.all(
        Array.from({ length: Math.max(1, opts.workers) }, () => worker()),
      ).then(() => undefined);
      return running;
    },
    async stop() {
      await queue.shutdownAndDrain();
      await running;
    },
  };
}
