// The pod watch behind pod label attributes holds metadata stubs only (issue 17, ADR 0016):
// a real client-node informer against a fake API server that serves whole pods.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { bindWatches, realClock } from '@cloudmap-mcs/core';
import { createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createPodLabelCache, type PodLabelCache } from '../src/kube/pod-labels.js';
import type { EndpointSliceObject } from '../src/k8s-types.js';
import { exportWatches } from '../src/watches.js';
import { fakeWatched } from './fake-watched.js';

/** A pod as the API server sends it: spec, status, annotations, managedFields and all. */
const pod = (
  name: string,
  rv: string,
  labels: Record<string, string>,
  phase = 'Running',
): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'shop',
    uid: `uid-${name}`,
    resourceVersion: rv,
    labels,
    annotations: { 'example.com/big': 'x'.repeat(2_000) },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-1' }],
    managedFields: [{ manager: 'kubelet', operation: 'Update', fieldsType: 'FieldsV1' }],
  },
  spec: {
    nodeName: 'node-1',
    containers: [
      { name: 'c', image: 'registry.k8s.io/pause:3.10', env: [{ name: 'A', value: 'b' }] },
    ],
  },
  status: { phase, podIP: '10.1.0.20', conditions: [{ type: 'Ready', status: 'True' }] },
});

const slice: EndpointSliceObject = {
  metadata: { name: 'cart-x', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'cart' } },
  addressType: 'IPv4',
  endpoints: [
    { addresses: ['10.1.0.20'], targetRef: { kind: 'Pod', namespace: 'shop', name: 'cart-1' } },
  ],
} as EndpointSliceObject;

let server: Server | undefined;
let cache: PodLabelCache | undefined;

afterEach(async () => {
  await cache?.stop();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

/** Serves one pod list, then holds the watch open; `send` writes watch events to it. */
async function fakeApiServer(items: V1Pod[]) {
  let watch: ServerResponse | undefined;
  const watching: (() => void)[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/api/v1/pods') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') {
      res.flushHeaders(); // as the API server does: the watch is open before any event
      watch = res;
      for (const w of watching.splice(0)) w();
      return;
    }
    res.end(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: '10' },
        items,
      }),
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // Plain HTTP on loopback; client-node wants skipTLSVerify to allow it.
    clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
    currentContext: 'fake',
  });
  return {
    kc,
    watchOpen: () => new Promise<void>((r) => (watch ? r() : watching.push(r))),
    send: (type: 'MODIFIED' | 'DELETED', object: V1Pod) =>
      watch!.write(`${JSON.stringify({ type, object })}\n`),
  };
}

const until = async (what: string, probe: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('pod label cache', () => {
  it('holds name, namespace, uid, resourceVersion and labels of each pod, nothing else; re-queues on label changes only', async () => {
    const api = await fakeApiServer([
      pod('cart-1', '5', { app: 'cart', version: 'red' }),
      pod('other', '6', { app: 'other' }),
    ]);
    const enqueued: string[] = [];
    const logger = createMemoryLogger();
    cache = createPodLabelCache({
      kubeConfig: api.kc,
      logger,
      clock: realClock,
    });
    // The export agent's Pod watch (watches.ts) on this cache.
    const pods = exportWatches(
      fakeWatched({ pods: cache, slicesIn: () => [slice], exported: () => true }),
    ).filter((w) => w.kind === 'Pod');
    bindWatches(pods, (key) => enqueued.push(key), logger);
    expect(cache.ready()).toBe(false); // the first call starts the watch
    await until('synced', () => cache!.ready());
    await api.watchOpen();

    expect(cache.cached('shop', 'cart-1')).toEqual({
      metadata: {
        name: 'cart-1',
        namespace: 'shop',
        uid: 'uid-cart-1',
        resourceVersion: '5',
        labels: { app: 'cart', version: 'red' },
      },
    });
    expect(Object.keys(cache.cached('shop', 'other') ?? {})).toEqual(['metadata']);
    expect(cache.labels('shop', 'cart-1')).toEqual({ app: 'cart', version: 'red' });
    // First sight of the pod backing the export re-queues it; the other pod backs nothing.
    expect(enqueued).toEqual(['shop/cart']);

    // A status update with the same labels (in another order): cached anew, nothing re-queued.
    api.send('MODIFIED', pod('cart-1', '7', { version: 'red', app: 'cart' }, 'Pending'));
    await until('rv 7', () => cache!.cached('shop', 'cart-1')?.metadata?.resourceVersion === '7');
    expect(cache.cached('shop', 'cart-1')).toEqual({
      metadata: {
        name: 'cart-1',
        namespace: 'shop',
        uid: 'uid-cart-1',
        resourceVersion: '7',
        labels: { version: 'red', app: 'cart' },
      },
    });
    expect(enqueued).toEqual(['shop/cart']);

    // A label change re-queues the export; so does the pod's deletion.
    api.send('MODIFIED', pod('cart-1', '8', { app: 'cart', version: 'green' }));
    await until('relabelled', () => cache!.labels('shop', 'cart-1')?.['version'] === 'green');
    expect(enqueued).toEqual(['shop/cart', 'shop/cart']);
    api.send('DELETED', pod('cart-1', '9', { app: 'cart', version: 'green' }));
    await until('deleted', () => cache!.cached('shop', 'cart-1') === undefined);
    expect(enqueued).toEqual(['shop/cart', 'shop/cart', 'shop/cart']);
  });
});
