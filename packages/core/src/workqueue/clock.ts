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

export const realClock: Clock = (() => {
  let nextId = 1;
  const timers = new Map<number, NodeJS.Timeout>();
  return {
    now: () => performance.now(),
    setTimer(callback, delayMs) {
      const id = nextId++;
      const timer = setTimeout(
        () => {
          timers.delete(id);
          callback();
        },
        Math.max(0, delayMs),
      );
      timers.set(id, timer);
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
