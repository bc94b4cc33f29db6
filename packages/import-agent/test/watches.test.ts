import { bindWatches, createEventHub, type WatchedObject } from '@cloudmap-mcs/core';
import { createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { importWatches } from '../src/watches.js';

const meta = (namespace: string | undefined, name: string, labels?: Record<string, string>) => ({
  metadata: {
    ...(namespace === undefined ? {} : { namespace }),
    name,
    ...(labels === undefined ? {} : { labels }),
  },
});
const OWNED = { 'multicluster.kubernetes.io/service-name': 'cart' };

/** The import agent's watches over hubs, on a controller that knows `shop/cart` and `web/front`. */
function setup() {
  const w = {
    namespaces: createEventHub<WatchedObject>(),
    serviceImports: createEventHub<WatchedObject>(),
    serviceExports: createEventHub<WatchedObject>(),
    services: createEventHub<WatchedObject>(),
    endpointSlices: createEventHub<WatchedObject>(),
    localAddresses: createEventHub<unknown>(),
    external: createEventHub<string>(),
  };
  const table = importWatches(w, {
    namespaceKeys: (ns) => Promise.resolve(ns === 'shop' ? ['shop/cart'] : []),
    allKeys: () => ['shop/cart', 'web/front'],
  });
  const keys: string[] = [];
  const logger = createMemoryLogger();
  bindWatches(table, (key) => keys.push(key), logger);
  return { w, table, take: () => keys.splice(0), logger };
}

describe('import agent watches (src/watches.ts)', () => {
  it('declares what it watches', () => {
    expect(setup().table.map((row) => row.kind)).toEqual([
      'Namespace',
      'ServiceImport',
      'ServiceExport',
      'Service',
      'EndpointSlice',
      'local addresses',
      'CloudMapServiceImport',
    ]);
  });

  it('maps each event to the ServiceImport key', async () => {
    const { w, take } = setup();
    // Namespace appearing or going → its services' keys (read after a Cloud Map round); updates: none.
    w.namespaces.emit('update', meta(undefined, 'shop'));
    w.namespaces.emit('add', meta(undefined, 'shop'));
    w.namespaces.emit('delete', meta(undefined, 'shop'));
    await Promise.resolve();
    expect(take()).toEqual(['shop/cart', 'shop/cart']);
    // ServiceImport → its own key, on every event.
    for (const e of ['add', 'update', 'delete'] as const)
      w.serviceImports.emit(e, meta('shop', 'cart'));
    expect(take()).toEqual(['shop/cart', 'shop/cart', 'shop/cart']);
    // A local ServiceExport appearing or going → the import of the same name; updates: none.
    for (const e of ['add', 'update', 'delete'] as const)
      w.serviceExports.emit(e, meta('shop', 'cart'));
    expect(take()).toEqual(['shop/cart', 'shop/cart']);
    // Derived Service and EndpointSlice → the import their label names; unlabelled: none.
    w.services.emit('update', meta('shop', 'imported-cart', OWNED));
    w.endpointSlices.emit('delete', meta('shop', 'imported-cart-x1', OWNED));
    w.services.emit('update', meta('shop', 'someone-elses'));
    expect(take()).toEqual(['shop/cart', 'shop/cart']);
    // Local addresses → every import; a selected external service → its key.
    w.localAddresses.emit('update', undefined);
    w.external.emit('update', 'web/legacy');
    expect(take()).toEqual(['shop/cart', 'web/front', 'web/legacy']);
  });

  it('an object without namespace maps to no key and a debug log', () => {
    const { w, take, logger } = setup();
    w.serviceImports.emit('add', meta(undefined, 'cart'));
    w.services.emit('add', meta(undefined, 'imported-cart', OWNED));
    expect(take()).toEqual([]);
    expect(logger.find('watch event maps to no key').map((e) => e.fields['kind'])).toEqual([
      'ServiceImport',
      'Service',
    ]);
  });
});
