import { describe, expect, it } from 'vitest';
import {
  FakeClock,
  TerminalError,
  createWorkQueue,
  exponentialBackoffLimiter,
  runWorkers,
  type ReconcileOutcome,
} from '../../src/index.js';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function harness() {
  const clock = new FakeClock();
  const queue = createWorkQueue<string>({
    clock,
    rateLimiter: exponentialBackoffLimiter({ baseDelayMs: 100, maxDelayMs: 10_000 }),
  });
  const outcomes: [string, ReconcileOutcome][] = [];
  return {
    clock,
    queue,
    outcomes,
    onResult: (k: string, o: ReconcileOutcome) => outcomes.push([k, o]),
  };
}

describe('runWorkers', () => {
  it('retries a failing key with backoff until it succeeds, then resets its backoff', async () => {
    const { clock, queue, outcomes, onResult } = harness();
    let calls = 0;
    const done = runWorkers(
      queue,
      async () => {
        calls++;
        if (calls <= 2) throw new Error('transient');
      },
      1,
      { onResult },
    );
    queue.add('a');
    await flush();
    expect(calls).toBe(1);
    clock.advance(99);
    await flush();
    expect(calls).toBe(1);
    clock.advance(1); // first backoff: 100 ms
    await flush();
    expect(calls).toBe(2);
    clock.advance(200); // second backoff: 200 ms
    await flush();
    expect(calls).toBe(3);
    expect(queue.numRequeues('a')).toBe(0);
    expect(outcomes.map(([, o]) => o)).toEqual(['error', 'error', 'success']);
    queue.shutdown();
    await done;
  });

  it('reports a TerminalError once and does not retry it', async () => {
    const { clock, queue, outcomes, onResult } = harness();
    let calls = 0;
    const done = runWorkers(
      queue,
      async () => {
        calls++;
        throw new TerminalError('bad spec');
      },
      1,
      { onResult },
    );
    queue.add('a');
    await flush();
    clock.advance(60_000);
    await flush();
    expect(calls).toBe(1);
    expect(outcomes).toEqual([['a', 'terminal']]);
    queue.shutdown();
    await done;
  });

  it('requeues after the interval a reconcile asks for', async () => {
    const { clock, queue, outcomes, onResult } = harness();
    let calls = 0;
    const done = runWorkers(
      queue,
      async () => {
        calls++;
        return { requeueAfterMs: 5000 };
      },
      2,
      { onResult },
    );
    queue.add('a');
    await flush();
    clock.advance(4999);
    await flush();
    expect(calls).toBe(1);
    clock.advance(1);
    await flush();
    expect(calls).toBe(2);
    expect(outcomes[0]).toEqual(['a', 'requeue']);
    queue.shutdown();
    await done;
  });

  it('never reconciles one key concurrently, even with several workers', async () => {
    const { queue } = harness();
    let active = 0;
    let maxActive = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const done = runWorkers(
      queue,
      async () => {
        calls++;
        active++;
        maxActive = Math.max(maxActive, active);
        if (calls === 1) await gate;
        active--;
      },
      4,
    );
    queue.add('a');
    await flush();
    queue.add('a');
    queue.add('a');
    await flush();
    expect(calls).toBe(1);
    release();
    await flush();
    expect(calls).toBe(2);
    expect(maxActive).toBe(1);
    await queue.shutdownAndDrain();
    await done;
  });

  it('ends when the queue shuts down, after the key in flight', async () => {
    const { queue } = harness();
    let finished = false;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const done = runWorkers(
      queue,
      async () => {
        await gate;
        finished = true;
      },
      2,
    );
    queue.add('a');
    await flush();
    const drained = queue.shutdownAndDrain();
    release();
    await drained;
    await done;
    expect(finished).toBe(true);
  });
});
