import { bindWatches, type WatchEvent } from '@cloudmap-mcs/core';
import { createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import type { EndpointSliceObject } from '../src/k8s-types.js';
import { exportWatches } from '../src/watches.js';
import { fakeWatched } from './fake-watched.js';

const meta = (namespace: string, name: string, labels?: Record<string, string>) => ({
  metadata: { namespace, name, ...(labels === undefined ? {} : { labels }) },
});
const SVC = 'kubernetes.io/service-name';
const slice: EndpointSliceObject = {
  ...meta('shop', 'cart-x1', { [SVC]: 'cart' }),
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', name: 'cart-1' } }],
} as EndpointSliceObject;

/** The export agent's watches over fake sources: `cart` is exported in `shop`, `other` is not. */
function setup(over: Parameters<typeof fakeWatched>[0] = {}) {
  const w = fakeWatched({
    exported: (ns, name) => ns === 'shop' && name === 'cart',
    slicesIn: (ns) => (ns === 'shop' ? [slice] : []),
    serviceExportKeys: () => ['shop/cart', 'web/front'],
    ...over,
  });
  const table = exportWatches(w);
  const keys: string[] = [];
  const logger = createMemoryLogger();
  bindWatches(table, (key) => keys.push(key), logger);
  const take = () => keys.splice(0);
  return { w, table, take, logger };
}

describe('export agent watches (src/watches.ts)', () => {
  it('declares what it watches', () => {
    expect(setup().table.map((row) => row.kind)).toEqual([
      'ServiceExport',
      'Service',
      'EndpointSlice',
      'Pod',
      'ClusterProperty',
      'Service read',
    ]);
  });

  it('maps each event to the ServiceExport key', () => {
    const { w, take } = setup();
    const events: WatchEvent[] = ['add', 'update', 'delete'];
    // ServiceExport → its own key, on every event.
    for (const e of events) w.serviceExports.emit(e, meta('shop', 'cart'));
    expect(take()).toEqual(['shop/cart', 'shop/cart', 'shop/cart']);
    // Service → the export of the same name, only when exported.
    for (const e of events) w.services.emit(e, meta('shop', 'cart'));
    w.services.emit('add', meta('shop', 'other'));
    expect(take()).toEqual(['shop/cart', 'shop/cart', 'shop/cart']);
    // EndpointSlice → the export its service-name label names, only when exported.
    w.endpointSlices.emit('update', meta('shop', 'cart-x1', { [SVC]: 'cart' }));
    w.endpointSlices.emit('update', meta('shop', 'other-x1', { [SVC]: 'other' }));
    expect(take()).toEqual(['shop/cart']);
    // Pod → the exports whose slices point at it.
    w.pods.emit('update', meta('shop', 'cart-1'));
    w.pods.emit('delete', meta('shop', 'cart-2'));
    expect(take()).toEqual(['shop/cart']);
    // ClusterProperty → every export.
    w.identity.emit('update', undefined);
    expect(take()).toEqual(['shop/cart', 'web/front']);
    // A finished read of an export's Service and slices → that export.
    w.reads.emit('update', 'shop/cart');
    expect(take()).toEqual(['shop/cart']);
  });

  it('a ServiceExport whose objects are still being read maps to no key (the read enqueues it)', () => {
    const seen: [WatchEvent, string][] = [];
    const { w, take } = setup({
      exportEventReady: (event, key) => {
        seen.push([event, key]);
        return event === 'delete';
      },
    });
    w.serviceExports.emit('add', meta('shop', 'cart'));
    w.serviceExports.emit('delete', meta('shop', 'cart'));
    expect(take()).toEqual(['shop/cart']);
    expect(seen).toEqual([
      ['add', 'shop/cart'],
      ['delete', 'shop/cart'],
    ]);
  });

  it('an object without namespace or name maps to no key and a debug log', () => {
    const { w, take, logger } = setup();
    w.serviceExports.emit('add', { metadata: { name: 'cart' } });
    w.endpointSlices.emit('add', meta('shop', 'unlabelled'));
    expect(take()).toEqual([]);
    expect(logger.find('watch event maps to no key').map((e) => e.fields['kind'])).toEqual([
      'ServiceExport',
      'EndpointSlice',
    ]);
  });
});
