import type { Informer, KubernetesObject } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ObservedCollection } from '../../src/bench/observer.js';

/** client-node's informer as ObservedCollection uses it: callbacks by verb, start and stop. */
class ScriptedInformer implements Informer<KubernetesObject> {
  readonly callbacks = new Map<string, ((x?: unknown) => void)[]>();
  starts = 0;
  stops = 0;
  on(verb: string, cb: (x: never) => void): void {
    this.callbacks.set(verb, [...(this.callbacks.get(verb) ?? []), cb as (x?: unknown) => void]);
  }
  off(): void {}
  fire(verb: string, x?: unknown): void {
    for (const cb of this.callbacks.get(verb) ?? []) cb(x);
  }
  async start(): Promise<void> {
    this.starts += 1;
  }
  async stop(): Promise<void> {
    this.stops += 1;
  }
}

const obj = (name: string, value: string): KubernetesObject => ({
  metadata: { name, labels: { value } },
});

/** Folds objects into name → label `value`, as the observers fold theirs. */
class ValueObserver extends ObservedCollection<KubernetesObject> {
  readonly state = new Map<string, string>();
  whenValue(name: string, holds: (value: string | undefined) => boolean): Promise<number> {
    return this.when(name, () => holds(this.state.get(name)));
  }
  protected apply(event: 'upsert' | 'delete', o: KubernetesObject): string | undefined {
    const name = o.metadata?.name;
    if (name === undefined) return undefined;
    if (event === 'delete') this.state.delete(name);
    else this.state.set(name, o.metadata?.labels?.['value'] ?? '');
    return name;
  }
}

function collection() {
  const informer = new ScriptedInformer();
  const c = new ValueObserver(informer);
  return { informer, state: c.state, c };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ObservedCollection', () => {
  it('resolves a waiter at the first change of its key that makes it hold', async () => {
    vi.useFakeTimers({ now: 1_000 });
    const { informer, state, c } = collection();
    let at: number | undefined;
    void c.whenValue('a', (v) => v === 'x').then((t) => (at = t));
    informer.fire('add', obj('a', 'y'));
    state.set('a', 'x'); // a change under another key does not look at 'a'
    informer.fire('add', obj('b', 'x'));
    state.set('a', 'y');
    await Promise.resolve();
    expect(at).toBeUndefined();
    vi.setSystemTime(2_500);
    informer.fire('update', obj('a', 'x'));
    await Promise.resolve();
    expect(at).toBe(2_500);
  });

  it('resolves at once when the state already holds, and sees deletes', async () => {
    const { informer, c } = collection();
    informer.fire('add', obj('a', 'x'));
    await expect(c.whenValue('a', (v) => v === 'x')).resolves.toBeTypeOf('number');
    const gone = c.whenValue('a', (v) => v === undefined);
    informer.fire('delete', obj('a', 'x'));
    await expect(gone).resolves.toBeTypeOf('number');
  });

  it('ignores objects without a key', () => {
    const { informer, state } = collection();
    informer.fire('add', { metadata: {} });
    expect(state.size).toBe(0);
  });

  it('restarts the informer a second after a watch error until stopped', async () => {
    vi.useFakeTimers();
    const { informer, c } = collection();
    await c.start();
    expect(informer.starts).toBe(1);
    informer.fire('error', new Error('watch closed'));
    await vi.advanceTimersByTimeAsync(999);
    expect(informer.starts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(informer.starts).toBe(2);
    await c.stop();
    expect(informer.stops).toBe(1);
    informer.fire('error', new Error('watch closed'));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(informer.starts).toBe(2);
  });
});
