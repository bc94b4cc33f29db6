import { describe, expect, it } from 'vitest';
import {
  createWorkQueue,
  defaultControllerRateLimiter,
  exponentialBackoffLimiter,
  maxOfLimiters,
  tokenBucketLimiter,
  type RateLimiter,
  type WorkQueue,
} from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';

const noLimit: RateLimiter<string> = { when: () => 0, forget: () => {}, numRequeues: () => 0 };

function setup(rateLimiter: RateLimiter<string> = noLimit): {
  clock: FakeClock;
  queue: WorkQueue<string>;
} {
  const clock = new FakeClock();
  return { clock, queue: createWorkQueue({ clock, rateLimiter }) };
}

/** Takes every key that is ready now without waiting. */
async function drainReady(queue: WorkQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.length > 0) {
    const key = await queue.get();
    if (key === undefined) break;
    keys.push(key);
  }
  return keys;
}

describe('work queue: adds', () => {
  it.each([
    { name: 'single add', adds: ['a'], expected: ['a'] },
    { name: 'repeated adds merge', adds: ['a', 'a', 'a'], expected: ['a'] },
    {
      name: 'order is first-add order',
      adds: ['b', 'a', 'b', 'c', 'a'],
      expected: ['b', 'a', 'c'],
    },
    { name: 'no adds', adds: [], expected: [] },
  ])('$name', async ({ adds, expected }) => {
    const { queue } = setup();
    for (const key of adds) queue.add(key);
    expect(queue.length).toBe(expected.length);
    const got = await drainReady(queue);
    expect(got).toEqual(expected);
  });
});

describe('work queue: processing', () => {
  it('never hands the same key to two workers at once', async () => {
    const { queue } = setup();
    queue.add('a');
    const first = await queue.get();
    expect(first).toBe('a');
    queue.add('a');
    // 'a' is dirty but in flight: it must not be handed out yet.
    expect(queue.length).toBe(0);
    let second: string | undefined;
    const pending = queue.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    queue.done('a');
    await pending;
    expect(second).toBe('a');
  });

  it('re-runs a key added while it was processing exactly once', async () => {
    const { queue } = setup();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    queue.add('a');
    queue.done(key as string);
    expect(queue.length).toBe(1);
    const again = await queue.get();
    expect(again).toBe('a');
    queue.done('a');
    expect(queue.length).toBe(0);
    expect(queue.inFlight).toBe(0);
  });

  it('does not re-run a key that was not re-added', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.done((await queue.get()) as string);
    expect(queue.length).toBe(0);
  });

  it('lets other keys proceed while one is in flight', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(queue.inFlight).toBe(2);
  });

  it('wakes a waiting getter when a key arrives', async () => {
    const { queue } = setup();
    const got = queue.get();
    queue.add('x');
    await expect(got).resolves.toBe('x');
  });
});

describe('work queue: delayed adds', () => {
  it('adds a key only when its delay has passed', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    expect(queue.length).toBe(0);
    clock.advance(99);
    expect(queue.length).toBe(0);
    clock.advance(1);
    expect(queue.length).toBe(1);
  });

  it('keeps the earliest of several pending delays for one key', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 500);
    queue.addAfter('a', 100);
    queue.addAfter('a', 300);
    clock.advance(100);
    expect(queue.length).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('treats a non-positive delay as an immediate add', () => {
    const { queue } = setup();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    expect(queue.length).toBe(2);
  });

  it('merges a delayed add with a key already waiting', async () => {
    const { clock, queue } = setup();
    queue.add('a');
    queue.addAfter('a', 10);
    clock.advance(10);
    expect(await drainReady(queue)).toEqual(['a']);
  });
});

describe('work queue: rate limited adds', () => {
  it('backs a failing key off exponentially and resets on forget', async () => {
    const { clock, queue } = setup(
      exponentialBackoffLimiter({ baseDelayMs: 10, maxDelayMs: 1000 }),
    );
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = clock.now();
      queue.addRateLimited('a');
      let waited = 0;
      while (queue.length === 0 && waited < 10_000) {
        clock.advance(1);
        waited++;
      }
      delays.push(clock.now() - before);
      expect(waited).toBeGreaterThan(0);
      queue.done((await queue.get()) as string);
    }
    expect(delays).toEqual([10, 20, 40, 80]);
    expect(queue.numRequeues('a')).toBe(4);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
  });

  it('keeps backoff per key', () => {
    const limiter = exponentialBackoffLimiter<string>({ baseDelayMs: 5, maxDelayMs: 1000 });
    expect([limiter.when('a'), limiter.when('a'), limiter.when('b'), limiter.when('a')]).toEqual([
      5, 10, 5, 20,
    ]);
  });

  it.each([
    { failures: 1, expected: 5 },
    { failures: 10, expected: 2560 },
    { failures: 30, expected: 1_000_000 },
    { failures: 2000, expected: 1_000_000 },
  ])('caps backoff: delay after $failures failures is $expected ms', ({ failures, expected }) => {
    const limiter = exponentialBackoffLimiter<string>({ baseDelayMs: 5, maxDelayMs: 1_000_000 });
    let last = 0;
    for (let i = 0; i < failures; i++) last = limiter.when('k');
    expect(last).toBe(expected);
  });

  it('limits the overall rate across keys with a token bucket', () => {
    const clock = new FakeClock();
    const bucket = tokenBucketLimiter<string>({ ratePerSecond: 10, burst: 2 }, clock);
    // Two tokens of burst, then one every 100 ms.
    expect([bucket.when('a'), bucket.when('b'), bucket.when('c'), bucket.when('d')]).toEqual([
      0, 0, 100, 200,
    ]);
    clock.advance(1000);
    expect(bucket.when('e')).toBe(0);
  });

  it('combines per-key backoff and the overall limit by taking the longer delay', () => {
    const clock = new FakeClock();
    const limiter = maxOfLimiters<string>(
      exponentialBackoffLimiter({ baseDelayMs: 1, maxDelayMs: 10_000 }),
      tokenBucketLimiter({ ratePerSecond: 1, burst: 1 }, clock),
    );
    expect(limiter.when('a')).toBe(1); // first: backoff 1 ms, bucket has a token
    expect(limiter.when('b')).toBe(1000); // bucket empty: wait for the next token
    expect(limiter.numRequeues('a')).toBe(1);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });

  it('the default controller limiter starts at 5 ms', () => {
    const limiter = defaultControllerRateLimiter<string>(new FakeClock());
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('a')).toBe(10);
  });

  it('rejects a token bucket that can never hand out a token', () => {
    expect(() => tokenBucketLimiter({ ratePerSecond: 0, burst: 1 }, new FakeClock())).toThrow(
      RangeError,
    );
  });
});

describe('work queue: shutdown', () => {
  it('releases idle getters with undefined', async () => {
    const { queue } = setup();
    const got = queue.get();
    queue.shutdown();
    await expect(got).resolves.toBeUndefined();
  });

  it('still hands out keys queued before shutdown, then ends', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    queue.shutdown();
    queue.add('c');
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(await queue.get()).toBeUndefined();
  });

  it('drops delayed adds on shutdown', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 10);
    queue.shutdown();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(100);
    expect(queue.length).toBe(0);
  });

  it('drain waits for keys in flight', async () => {
    const { queue } = setup();
    queue.add('a');
    const key = await queue.get();
    let drained = false;
    const drain = queue.shutdownAndDrain().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    queue.done(key as string);
    await drain;
    expect(drained).toBe(true);
  });

  it('drain resolves at once when nothing is in flight', async () => {
    const { queue } = setup();
    await expect(queue.shutdownAndDrain()).resolves.toBeUndefined();
    expect(queue.shuttingDown).toBe(true);
  });
});
