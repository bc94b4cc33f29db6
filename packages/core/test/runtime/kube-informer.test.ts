// What the informer caches keep of an object (issue 14: memory bounded by what is read).
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  isMetadataStub,
  listInPages,
  metadataStub,
  stripUnread,
  transformingWatch,
  watchTimeouts,
  type ListPage,
  type WatchLike,
} from '../../src/runtime/kube-informer.js';

const service = (): KubernetesObject & { spec: { ports: { port: number }[] } } => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '42',
    labels: { app: 'web' },
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{"a":"huge copy"}',
      'example.com/kept': 'yes',
    },
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
  },
  spec: { ports: [{ port: 80 }] },
});

describe('stripUnread', () => {
  it('drops managedFields and the last-applied copy, keeps everything else', () => {
    const o = stripUnread(service());
    expect(o.metadata?.managedFields).toBeUndefined();
    expect(o.metadata?.annotations).toEqual({ 'example.com/kept': 'yes' });
    expect(o.metadata).toMatchObject({ name: 'web', namespace: 'shop', resourceVersion: '42' });
    expect(o.spec.ports).toEqual([{ port: 80 }]);
    expect(isMetadataStub(o)).toBe(false);
  });

  it('removes an annotations map left empty, and leaves objects without metadata alone', () => {
    const o = service();
    o.metadata!.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    expect(stripUnread(o).metadata?.annotations).toBeUndefined();
    expect(stripUnread({ kind: 'X' })).toEqual({ kind: 'X' });
  });
});

describe('metadataStub', () => {
  it('keeps the identity (and resourceVersion, so the watch resumes) and nothing else', () => {
    const stub = metadataStub(service());
    expect(stub).toEqual({
      metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '42' },
    });
    expect(isMetadataStub(stub)).toBe(true);
  });

  it('keeps labels when asked, and a deletionTimestamp always (a terminating namespace)', () => {
    const o = service();
    o.metadata!.deletionTimestamp = new Date('2026-12-01T00:00:00Z');
    const stub = metadataStub(o, { labels: true });
    expect(stub.metadata?.labels).toEqual({ app: 'web' });
    expect(stub.metadata?.deletionTimestamp).toEqual(new Date('2026-12-01T00:00:00Z'));
  });

  it('keeps only the named labels when given a list, and no labels object when none match', () => {
    const o = service();
    o.metadata!.labels = { 'kubernetes.io/service-name': 'web', 'managed-by': 'x', app: 'web' };
    expect(metadataStub(o, { labels: ['kubernetes.io/service-name'] }).metadata?.labels).toEqual({
      'kubernetes.io/service-name': 'web',
    });
    expect(metadataStub(o, { labels: ['absent'] }).metadata).not.toHaveProperty('labels');
    expect(metadataStub(o, { labels: false }).metadata).not.toHaveProperty('labels');
  });

  it('is told apart from a full object, and from undefined', () => {
    expect(isMetadataStub(undefined)).toBe(false);
    expect(isMetadataStub(service())).toBe(false);
  });
});

describe('listInPages', () => {
  type Obj = KubernetesObject & { big?: string };
  const obj = (i: number): Obj => ({
    metadata: { name: `o${i}`, resourceVersion: `${i}` },
    big: 'x',
  });
  /** A list call over `total` objects that serves `limit` at a time, as the API server does. */
  const server = (total: number) => {
    const calls: ListPage[] = [];
    const list = (page: ListPage): Promise<KubernetesListObject<Obj>> => {
      calls.push(page);
      const start = page._continue === undefined ? 0 : Number(page._continue);
      const end = Math.min(total, start + page.limit);
      const items = Array.from({ length: end - start }, (_, k) => obj(start + k));
      return Promise.resolve({
        apiVersion: 'v1',
        kind: 'List',
        metadata: {
          resourceVersion: '77',
          ...(end < total ? { _continue: String(end), remainingItemCount: total - end } : {}),
        },
        items,
      });
    };
    return { list, calls };
  };

  it('reads every page, transforming each before asking for the next', async () => {
    const { list, calls } = server(1_234);
    const seenAtCall: number[] = [];
    let transformed = 0;
    const result = await listInPages(
      (page) => {
        seenAtCall.push(transformed);
        return list(page);
      },
      500,
      (o) => {
        transformed += 1;
        return metadataStub(o);
      },
    );
    expect(calls).toEqual([
      { limit: 500 },
      { limit: 500, _continue: '500' },
      { limit: 500, _continue: '1000' },
    ]);
    // Page n is requested only once the n-1 pages before it were transformed.
    expect(seenAtCall).toEqual([0, 500, 1_000]);
    expect(result.items).toHaveLength(1_234);
    expect(result.items.every((o) => isMetadataStub(o))).toBe(true);
    expect(result.items.map((o) => o.metadata?.name)).toEqual(
      Array.from({ length: 1_234 }, (_, i) => `o${i}`),
    );
    // The watch starts from the list's resourceVersion; no continue token is left behind.
    expect(result.metadata).toEqual({ resourceVersion: '77' });
  });

  it('follows the continue token of a custom object list (the JSON field `continue`)', async () => {
    const { list } = server(1_001);
    const raw = async (page: ListPage): Promise<KubernetesListObject<Obj>> => {
      const typed = await list(page);
      const { _continue: token, ...rest } = typed.metadata ?? {};
      return {
        ...typed,
        metadata: { ...rest, ...(token === undefined ? {} : { continue: token }) },
      };
    };
    const result = await listInPages(raw, 500, stripUnread);
    expect(result.items).toHaveLength(1_001);
    expect(result.metadata).toEqual({ resourceVersion: '77' });
  });

  it('takes a list call that ignores paging as one page', async () => {
    const { list } = server(3);
    const result = await listInPages(() => list({ limit: 1_000_000 }), 2, stripUnread);
    expect(result.items).toHaveLength(3);
    expect(result.metadata).toEqual({ resourceVersion: '77' });
  });
});

describe('watchTimeouts', () => {
  it('ends watches server-side within 3 to 4.5 minutes, before the 5-minute watchdog', () => {
    expect(watchTimeouts(() => 0)).toEqual({
      serverTimeoutSeconds: 180,
      clientIdleTimeoutMs: 210_000,
    });
    const last = watchTimeouts(() => 0.999_999);
    expect(last.serverTimeoutSeconds).toBe(269);
    expect(last.clientIdleTimeoutMs).toBe(299_000);
    // The client never gives up on a watch before the server was due to end it.
    for (const r of [0, 0.25, 0.5, 0.75, 0.99]) {
      const t = watchTimeouts(() => r);
      expect(t.clientIdleTimeoutMs).toBeGreaterThan(t.serverTimeoutSeconds * 1000);
    }
  });
});

describe('transformingWatch', () => {
  type Call = {
    params: Record<string, unknown>;
    timeoutMs: number;
    callback: (...a: unknown[]) => void;
  };
  const fakeWatch = (): WatchLike & { calls: Call[] } => {
    const calls: Call[] = [];
    const fake = {
      requestTimeoutMs: 30_000,
      calls,
      watch(
        _path: string,
        params: Record<string, unknown>,
        callback: (...a: unknown[]) => void,
      ): Promise<AbortController> {
        calls.push({ params, timeoutMs: fake.requestTimeoutMs, callback });
        return Promise.resolve(new AbortController());
      },
    };
    return fake as WatchLike & { calls: Call[] };
  };

  it('asks for bookmarks and a server-side timeout, and waits longer than it in silence', async () => {
    const inner = fakeWatch();
    let n = 0;
    const watch = transformingWatch(
      inner,
      (o) => o,
      () => undefined,
      () => ({
        serverTimeoutSeconds: 200 + n,
        clientIdleTimeoutMs: 230_000 + 1000 * n++,
      }),
    );
    await watch.watch(
      '/api/v1/services',
      { resourceVersion: '7', labelSelector: 'a=b' },
      () => undefined,
      () => undefined,
    );
    await watch.watch(
      '/api/v1/services',
      { resourceVersion: '9' },
      () => undefined,
      () => undefined,
    );
    expect(inner.calls.map((c) => [c.params, c.timeoutMs])).toEqual([
      [
        {
          resourceVersion: '7',
          labelSelector: 'a=b',
          allowWatchBookmarks: true,
          timeoutSeconds: 200,
        },
        230_000,
      ],
      [{ resourceVersion: '9', allowWatchBookmarks: true, timeoutSeconds: 201 }, 231_000],
    ]);
  });

  it('transforms objects of ADDED/MODIFIED/DELETED, passes BOOKMARK and ERROR as they are, and reports each line alive', async () => {
    const inner = fakeWatch();
    let alive = 0;
    const seen: [string, unknown][] = [];
    const watch = transformingWatch<KubernetesObject>(
      inner,
      (o) => metadataStub(o),
      () => (alive += 1),
    );
    await watch.watch(
      '/p',
      {},
      (phase: string, obj: unknown) => seen.push([phase, obj]),
      () => undefined,
    );
    const cb = inner.calls[0]!.callback;
    const bookmark = { kind: 'Service', metadata: { resourceVersion: '12' } };
    const status = { kind: 'Status', code: 410 };
    cb('ADDED', service(), {});
    cb('BOOKMARK', bookmark, {});
    cb('ERROR', status, {});
    expect(alive).toBe(3);
    expect(seen[0]![0]).toBe('ADDED');
    expect(isMetadataStub(seen[0]![1] as object)).toBe(true);
    expect(seen[1]).toEqual(['BOOKMARK', bookmark]);
    expect(seen[1]![1]).toBe(bookmark);
    expect(seen[2]![1]).toBe(status);
  });
});
