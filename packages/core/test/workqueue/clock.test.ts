import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_DELAY_MS, realClock } from '../../src/workqueue/clock.js';

describe('realClock timers', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('a delay past 2^31-1 ms waits its full length instead of firing at once', () => {
    const asked: number[] = [];
    const real = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      asked.push(ms ?? 0);
      return real(fn, ms);
    }) as typeof setTimeout);
    let fired = 0;
    const yearsMs = 5 * 365 * 24 * 3600 * 1000; // a renewal time five years ahead
    realClock.setTimer(() => fired++, yearsMs);
    vi.advanceTimersByTime(1_000);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(yearsMs - 2_000);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(fired).toBe(1);
    expect(asked.length).toBeGreaterThan(1);
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
  });

  it('a long timer is cleared by its one handle, whichever step it is in', () => {
    let fired = 0;
    const handle = realClock.setTimer(() => fired++, 3 * MAX_TIMER_DELAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 1_000); // into the second step
    realClock.clearTimer(handle);
    vi.advanceTimersByTime(3 * MAX_TIMER_DELAY_MS);
    expect(fired).toBe(0);
  });

  it('short, zero, negative and NaN delays behave as setTimeout does', () => {
    const order: string[] = [];
    realClock.setTimer(() => order.push('10'), 10);
    realClock.setTimer(() => order.push('0'), 0);
    realClock.setTimer(() => order.push('neg'), -5);
    realClock.setTimer(() => order.push('nan'), Number.NaN);
    vi.advanceTimersByTime(9);
    expect(order).toEqual(['0', 'neg', 'nan']);
    vi.advanceTimersByTime(1);
    expect(order).toEqual(['0', 'neg', 'nan', '10']);
  });
});
