import { describe, expect, it } from 'vitest';
import {
  bindWatches,
  createEventHub,
  keyIn,
  objectKey,
  watch,
  type WatchedObject,
  type WatchEvent,
} from '../../src/index.js';
import { createMemoryLogger } from '../../src/testing/index.js';

const obj = (
  namespace?: string,
  name?: string,
  labels?: Record<string, string>,
): WatchedObject => ({
  metadata: {
    ...(namespace === undefined ? {} : { namespace }),
    ...(name === undefined ? {} : { name }),
    ...(labels === undefined ? {} : { labels }),
  },
});

describe('watches', () => {
  it('maps each event of each source to the keys its row declares', () => {
    const exports = createEventHub<WatchedObject>();
    const slices = createEventHub<WatchedObject>();
    const added: string[] = [];
    bindWatches(
      [
        watch('ServiceExport', exports, (_e, o) => [objectKey(o)]),
        // Only appearing or going objects; the key of the Service the label names.
        watch('EndpointSlice', slices, (event: WatchEvent, o) =>
          event === 'update' ? [] : [keyIn(o, o.metadata?.labels?.['svc'])],
        ),
      ],
      (key) => added.push(key),
      createMemoryLogger(),
    );
    for (const event of ['add', 'update', 'delete'] as const)
      exports.emit(event, obj('shop', 'cart'));
    expect(added).toEqual(['shop/cart', 'shop/cart', 'shop/cart']);
    added.length = 0;
    for (const event of ['add', 'update', 'delete'] as const)
      slices.emit(event, obj('shop', 'cart-x1', { svc: 'cart' }));
    expect(added).toEqual(['shop/cart', 'shop/cart']);
  });

  it('a row may map to several keys, or to keys read first (a promise)', async () => {
    const all = createEventHub<unknown>();
    const ns = createEventHub<WatchedObject>();
    const added: string[] = [];
    bindWatches(
      [
        watch('ClusterProperty', all, () => ['a/1', 'b/2']),
        watch('Namespace', ns, async (_e, o) => [`${o.metadata?.name}/x`]),
      ],
      (key) => added.push(key),
      createMemoryLogger(),
    );
    all.emit('update', undefined);
    ns.emit('add', obj(undefined, 'shop'));
    expect(added).toEqual(['a/1', 'b/2']);
    await Promise.resolve();
    expect(added).toEqual(['a/1', 'b/2', 'shop/x']);
  });

  it('a malformed or unknown object maps to no key and a debug log, never a throw', async () => {
    const hub = createEventHub<WatchedObject>();
    const failing = createEventHub<WatchedObject>();
    const logger = createMemoryLogger();
    const added: string[] = [];
    bindWatches(
      [
        watch('Service', hub, (_e, o) => [objectKey(o)]),
        watch<WatchedObject, string>('Odd', failing, () =>
          Promise.reject(new Error('cannot read')),
        ),
      ],
      (key) => added.push(key),
      logger,
    );
    expect(() => hub.emit('add', obj('shop'))).not.toThrow();
    expect(() => hub.emit('add', obj(undefined, 'cart'))).not.toThrow();
    expect(() => hub.emit('add', {})).not.toThrow();
    failing.emit('update', obj('shop', 'cart'));
    await new Promise((r) => setTimeout(r, 0));
    expect(added).toEqual([]);
    const logged = logger.find('watch event maps to no key');
    expect(logged.map((e) => [e.level, e.fields['kind'], e.fields['event']])).toEqual([
      ['debug', 'Service', 'add'],
      ['debug', 'Service', 'add'],
      ['debug', 'Service', 'add'],
      ['debug', 'Odd', 'update'],
    ]);
  });

  it('unbinding stops the keys; a hub tells only handlers subscribed at the time', () => {
    const hub = createEventHub<WatchedObject>();
    const added: string[] = [];
    hub.emit('add', obj('shop', 'early'));
    const unbind = bindWatches(
      [watch('ServiceImport', hub, (_e, o) => [objectKey(o)])],
      (key) => added.push(key),
      createMemoryLogger(),
    );
    hub.emit('add', obj('shop', 'cart'));
    unbind();
    hub.emit('add', obj('shop', 'late'));
    expect(added).toEqual(['shop/cart']);
  });
});
