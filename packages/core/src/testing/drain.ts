import type { WorkQueue } from '../workqueue/queue.js';

/** One turn of the event loop: pending promise callbacks and I/O of in-memory fakes run. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Waits until no key is waiting in `queue` and none is being reconciled (keys delayed on a
 * fake clock do not count: advance the clock for those). Fails after `maxTurns` turns of the
 * event loop, naming what is left, so a reconcile that never settles is a clear test failure
 * instead of a test that happens to look early enough.
 */
export async function drainQueue(
  queue: Pick<WorkQueue<unknown>, 'length' | 'inFlight'>,
  maxTurns = 1_000,
): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    await nextTurn();
    if (queue.length === 0 && queue.inFlight === 0) return;
  }
  throw new Error(
    `queue not drained after ${String(maxTurns)} turns: ${String(queue.length)} waiting, ${String(queue.inFlight)} in flight`,
  );
}
