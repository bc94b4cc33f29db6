import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { leaderOnly } from '../../src/runtime/leader-election.js';

// A context created after the flag is set has `gc` (the process was not started with it).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('leaderOnly retention', () => {
  it('keeps nothing of a finished call while leadership lasts', async () => {
    // Racing each call against one promise that settles only when leadership ends left a
    // reaction holding every result on that promise: a leader kept every Cloud Map answer.
    const leading = new AbortController();
    const port = { read: async (n: number) => ({ n, payload: new Array<string>(1000).fill('x') }) };
    const bound = leaderOnly(port, leading.signal);
    const results: WeakRef<object>[] = [];
    const failures: WeakRef<object>[] = [];
    const failing = leaderOnly(
      {
        write: async () => {
          throw new Error('refused');
        },
      },
      leading.signal,
    );
    for (let i = 0; i < 100; i++) {
      results.push(new WeakRef(await bound.read(i)));
      failures.push(new WeakRef(await failing.write().catch((e: unknown) => e as object)));
    }
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(results.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect(failures.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect(getEventListeners(leading.signal, 'abort')).toHaveLength(0);
    expect(leading.signal.aborted).toBe(false);
  });

  it('listens for the end of leadership only while a call is in flight', async () => {
    const leading = new AbortController();
    let answer: (v: string) => void = () => {};
    const bound = leaderOnly(
      { slow: () => new Promise<string>((resolve) => (answer = resolve)) },
      leading.signal,
    );
    const call = bound.slow();
    expect(getEventListeners(leading.signal, 'abort')).toHaveLength(1);
    answer('done');
    expect(await call).toBe('done');
    expect(getEventListeners(leading.signal, 'abort')).toHaveLength(0);
  });
});
