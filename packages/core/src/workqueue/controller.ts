import type { WorkQueue } from './queue.js';

/** What a reconcile asks for when it succeeds. */
export interface ReconcileResult {
  /** Run the key again after this long (periodic re-check), with backoff reset. */
  requeueAfterMs?: number;
}

export type Reconciler<K> = (key: K) => Promise<ReconcileResult | void>;

/**
 * An error that retrying cannot fix (a user error, a refused input). The controller reports
 * it and forgets the key instead of backing off (GUIDE.md rule 10).
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

export interface ControllerHooks<K> {
  /** Called once per reconcile with how it ended; errors are reported here, once. */
  onResult?: (key: K, outcome: ReconcileOutcome, durationMs: number, error?: unknown) => void;
  now?: () => number;
}

/**
 * Runs `workers` loops that take keys from the queue and reconcile them, following
 * controller-runtime's contract: success forgets the key's backoff, `requeueAfterMs` re-adds it
 * later, an error re-adds it rate limited, a TerminalError is reported and not retried.
 * Resolves when the queue is shut down and every worker has finished its key.
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  reconcile: Reconciler<K>,
  workers: number,
  hooks: ControllerHooks<K> = {},
): Promise<void> {
  const now = hooks.now ?? (() => performance.now());
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      const started = now();
      try {
        const result = await reconcile(key);
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          queue.addAfter(key, result.requeueAfterMs);
          hooks.onResult?.(key, 'requeue', now() - started);
        } else {
          hooks.onResult?.(key, 'success', now() - started);
        }
      } catch (error) {
        if (error instanceof TerminalError) {
          queue.forget(key);
          hooks.onResult?.(key, 'terminal', now() - started, error);
        } else {
          queue.addRateLimited(key);
          hooks.onResult?.(key, 'error', now() - started, error);
        }
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, () => worker()));
}
