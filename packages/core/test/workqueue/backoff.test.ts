import { describe, expect, it } from 'vitest';
import {
  cappedExponential,
  fullJitterDelay,
  sleep,
  SleepAbortedError,
} from '../../src/workqueue/backoff.js';
import { FakeClock } from '../../src/testing/index.js';

const policy = { baseDelayMs: 100, maxDelayMs: 5_000 };

describe('full jitter backoff', () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [6, 3_200],
    [7, 5_000],
    [60, 5_000],
  ])('attempt %i is capped at %i ms', (attempt, cap) => {
    expect(cappedExponential(attempt, policy)).toBe(cap);
    expect(fullJitterDelay(attempt, policy, () => 0)).toBe(0);
    expect(fullJitterDelay(attempt, policy, () => 0.999999)).toBe(cap - 1);
  });

  it('stays within [0, cap) and spreads over the range', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const samples = Array.from({ length: 2_000 }, () => fullJitterDelay(4, policy, random));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThan(800);
    // Full jitter, not "equal jitter": both halves of the range are used.
    expect(samples.filter((s) => s < 400).length).toBeGreaterThan(800);
    expect(samples.filter((s) => s >= 400).length).toBeGreaterThan(800);
  });
});

describe('sleep on the injected clock', () => {
  it('resolves when fake time passes and rejects on abort', async () => {
    const clock = new FakeClock();
    let done = false;
    const p = sleep(clock, 1_000).then(() => (done = true));
    clock.advance(999);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await p;
    expect(done).toBe(true);

    const ac = new AbortController();
    const aborted = sleep(clock, 1_000, ac.signal);
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(SleepAbortedError);
    expect(clock.pendingTimers).toBe(0);
  });
});
