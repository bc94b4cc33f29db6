// A ServiceExport created after the agent started names a Service and slices the caches hold
// only as stubs (kube/stub-reads.ts): they are read once and kept aside until the caches hold
// them in full. Found by the bench's conflict phase: at the Service's first change (its watch
// event brings it in full while its slices are still stubs) the copies aside were dropped too
// early, the next read answered "unknown", and the reconciler wrote "Service not found" and
// deregistered the export's records.
import type { CoreV1Api, DiscoveryV1Api, KubernetesObject } from '@kubernetes/client-node';
import { createEventHub, LABEL_SERVICE_NAME } from '@cloudmap-mcs/core';
import { metadataStub, type SupervisedInformer } from '@cloudmap-mcs/core/runtime';
import { createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { current, loading, type StubReads } from '../src/kube/stub-reads.js';

const service = (port: number, rv: string) => ({
  metadata: { name: 'cart', namespace: 'shop', resourceVersion: rv },
  spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP' }] },
});
const slice = (name: string, address: string, rv: string) => ({
  metadata: {
    name,
    namespace: 'shop',
    resourceVersion: rv,
    labels: { [LABEL_SERVICE_NAME]: 'cart' },
  },
  addressType: 'IPv4',
  endpoints: [{ addresses: [address] }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});
const sliceStub = (o: KubernetesObject) => metadataStub(o, { labels: [LABEL_SERVICE_NAME] });

/** A synced informer cache holding `objects` (namespace/name → object). */
function cache(objects: Map<string, KubernetesObject>): SupervisedInformer<KubernetesObject> {
  return {
    get: (name: string, namespace?: string) => objects.get(`${namespace}/${name}`),
    list: (namespace?: string) =>
      [...objects.values()].filter(
        (o) => namespace === undefined || o.metadata?.namespace === namespace,
      ),
    hasSynced: () => true,
  } as unknown as SupervisedInformer<KubernetesObject>;
}

function setup() {
  const services = new Map<string, KubernetesObject>();
  const slices = new Map<string, KubernetesObject>();
  const reads = { service: 0, slices: 0 };
  // What a GET and a LIST answer: the objects as they are on the API server.
  const server = { service: service(80, '10'), slices: [slice('cart-a', '10.1.0.5', '11')] };
  const core = {
    readNamespacedService: () => {
      reads.service++;
      return Promise.resolve(structuredClone(server.service));
    },
  } as unknown as CoreV1Api;
  const discovery = {
    listNamespacedEndpointSlice: () => {
      reads.slices++;
      return Promise.resolve({ items: structuredClone(server.slices) });
    },
  } as unknown as DiscoveryV1Api;
  const ended = createEventHub<string>();
  const r: StubReads = {
    core,
    discovery,
    services: cache(services),
    slices: cache(slices),
    logger: createMemoryLogger(),
    clock: new FakeClock(0),
    reads: ended,
    fetched: new Map(),
    inFlight: new Set(),
  };
  const readEnded = () =>
    new Promise<void>((resolve) => {
      const off = ended.on(() => {
        off();
        resolve();
      });
    });
  // The caches as they are when the export appears: stubs of the Service and its slice.
  services.set('shop/cart', metadataStub(service(80, '10')));
  slices.set('shop/cart-a', sliceStub(slice('cart-a', '10.1.0.5', '11')));
  return { r, services, slices, reads, readEnded };
}

/** What the reconciler asks, in its order: loading, then the Service, then the slices. */
function reconcilerView(r: StubReads) {
  const isLoading = loading(r, 'shop/cart');
  return {
    isLoading,
    service: current(r, 'shop/cart')?.service,
    slices: current(r, 'shop/cart')?.slices ?? [],
  };
}

describe('stub reads of a late export', () => {
  it('reads the stubs once and serves the copies aside', async () => {
    const { r, reads, readEnded } = setup();
    const ended = readEnded();
    expect(reconcilerView(r).isLoading).toBe(true);
    await ended;
    const view = reconcilerView(r);
    expect(view.isLoading).toBe(false);
    expect(view.service?.spec?.ports?.[0]?.port).toBe(80);
    expect(view.slices.map((s) => s.endpoints?.[0]?.addresses[0])).toEqual(['10.1.0.5']);
    expect(reads).toEqual({ service: 1, slices: 1 });
  });

  it('keeps the slices aside while only the Service arrived in full (its first change)', async () => {
    const { r, services, reads, readEnded } = setup();
    const ended = readEnded();
    loading(r, 'shop/cart');
    await ended;
    // The Service's port changed: its watch event brings it in full; the slice is a stub still.
    services.set('shop/cart', service(81, '12'));
    for (let round = 0; round < 3; round++) {
      const view = reconcilerView(r);
      expect(view.isLoading).toBe(false);
      expect(view.service?.spec?.ports?.[0]?.port).toBe(81);
      expect(view.slices.map((s) => s.endpoints?.[0]?.addresses[0])).toEqual(['10.1.0.5']);
    }
    expect(reads).toEqual({ service: 1, slices: 1 });
    expect(r.fetched.has('shop/cart')).toBe(true);
  });

  it('keeps the Service aside while only a slice arrived in full', async () => {
    const { r, slices, readEnded } = setup();
    const ended = readEnded();
    loading(r, 'shop/cart');
    await ended;
    slices.set('shop/cart-a', slice('cart-a', '10.1.0.6', '13'));
    const view = reconcilerView(r);
    expect(view.service?.spec?.ports?.[0]?.port).toBe(80);
    expect(view.slices.map((s) => s.endpoints?.[0]?.addresses[0])).toEqual(['10.1.0.6']);
    expect(r.fetched.has('shop/cart')).toBe(true);
  });

  it('drops the copies aside once the caches hold everything in full', async () => {
    const { r, services, slices, reads, readEnded } = setup();
    const ended = readEnded();
    loading(r, 'shop/cart');
    await ended;
    services.set('shop/cart', service(81, '12'));
    slices.set('shop/cart-a', slice('cart-a', '10.1.0.7', '13'));
    const view = reconcilerView(r);
    expect(view.service?.spec?.ports?.[0]?.port).toBe(81);
    expect(view.slices.map((s) => s.endpoints?.[0]?.addresses[0])).toEqual(['10.1.0.7']);
    expect(r.fetched.has('shop/cart')).toBe(false);
    expect(reads).toEqual({ service: 1, slices: 1 });
  });
});
