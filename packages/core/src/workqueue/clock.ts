/**
 * Time as the queue and controllers see it. Injected everywhere so tests can run on fake
 * time instead of sleeping (docs/contributing.md#reconcile-shape).
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch; only differences matter. */
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/**
 * The longest delay Node's setTimeout honours (2^31-1 ms, about 24.8 days): a longer one fires
 * at once with a TimeoutOverflowWarning, so a delay computed from bad data (a renewal time
 * years ahead) re-armed in a loop would spin (issue 31).
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export const realClock: Clock = (() => {
  let nextId = 1;
  const timers = new Map<number, NodeJS.Timeout>();
  // A delay past the limit waits in steps of at most the limit, under the same handle.
  const arm = (id: number, callback: () => void, dueAt: number): void => {
    const left = Math.max(0, dueAt - performance.now());
    const timer = setTimeout(
      () => {
        if (left > MAX_TIMER_DELAY_MS) return arm(id, callback, dueAt);
        timers.delete(id);
        callback();
      },
      Math.min(left, MAX_TIMER_DELAY_MS),
    );
    timers.set(id, timer);
  };
  return {
    now: () => performance.now(),
    setTimer(callback, delayMs) {
      const id = nextId++;
      // NaN (bad arithmetic upstream) runs at once, as setTimeout would; Infinity never runs.
      arm(id, callback, performance.now() + (Number.isNaN(delayMs) ? 0 : delayMs));
      return { id };
    },
    clearTimer(handle) {
      const timer = timers.get(handle.id);
      if (timer !== undefined) {
        clearTimeout(timer);
        timers.delete(handle.id);
      }
    },
  };
})();
