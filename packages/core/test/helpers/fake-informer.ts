import type { KubernetesObject } from '@kubernetes/client-node';
import type { InformerLike } from '../../src/runtime/informer.js';

type Cb = (x?: unknown) => void;

/** A scriptable stand-in for client-node's ListWatch, with its stop-on-error behaviour. */
export class FakeInformer<T extends KubernetesObject> implements InformerLike<T> {
  readonly objects = new Map<string, T>();
  readonly callbacks = new Map<string, Cb[]>();
  starts = 0;
  stops = 0;
  /** What the next start's list does: items to list, or an error. */
  nextList: T[] | Error = [];
  private listed: () => void = () => {};

  setListed(fn: () => void): void {
    this.listed = fn;
  }
  on(verb: 'add' | 'update' | 'delete' | 'change', cb: (obj: T) => void): void;
  on(verb: 'error' | 'connect', cb: (err?: unknown) => void): void;
  on(verb: string, cb: (x: never) => void): void {
    this.callbacks.set(verb, [...(this.callbacks.get(verb) ?? []), cb as Cb]);
  }
  fire(verb: string, x?: unknown): void {
    for (const cb of this.callbacks.get(verb) ?? []) cb(x);
  }
  async start(): Promise<void> {
    this.starts += 1;
    this.fire('connect');
    const list = this.nextList;
    if (list instanceof Error) {
      // client-node: list errors go to the error callbacks and start() resolves.
      this.fire('error', list);
      return;
    }
    this.listed();
    const keep = new Set(list.map((o) => this.key(o)));
    for (const [k, o] of this.objects)
      if (!keep.has(k)) {
        this.objects.delete(k);
        this.fire('delete', o);
      }
    for (const o of list) this.upsert(o);
  }
  async stop(): Promise<void> {
    this.stops += 1;
  }
  upsert(o: T): void {
    const had = this.objects.has(this.key(o));
    this.objects.set(this.key(o), o);
    this.fire(had ? 'update' : 'add', o);
  }
  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  list(): readonly T[] {
    return [...this.objects.values()];
  }
  private key(o: T): string {
    return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  }
}

export const obj = (name: string, namespace = 'default', rv = '1'): KubernetesObject => ({
  metadata: { name, namespace, resourceVersion: rv },
});
