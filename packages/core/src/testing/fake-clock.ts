import type { Clock, TimerHandle } from '../workqueue/clock.js';

/** A manually advanced clock: timers fire in due order when `advance` passes them. */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, { due: number; callback: () => void }>();

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { due: this.#now + Math.max(0, delayMs), callback });
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete(handle.id);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward, firing every timer due on the way, earliest first. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let nextId: number | undefined;
      let nextDue = Infinity;
      for (const [id, timer] of this.#timers) {
        if (
          timer.due <= target &&
          (timer.due < nextDue || (timer.due === nextDue && id < (nextId ?? Infinity)))
        ) {
          nextId = id;
          nextDue = timer.due;
        }
      }
      if (nextId === undefined) break;
      const timer = this.#timers.get(nextId);
      this.#timers.delete(nextId);
      this.#now = Math.max(this.#now, nextDue);
      timer?.callback();
    }
    this.#now = target;
  }
}
