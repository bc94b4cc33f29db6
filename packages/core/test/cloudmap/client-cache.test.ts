import { describe, expect, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createReadCache } from '../../src/cloudmap/cache.js';
import { noopCloudMapMetrics } from '../../src/cloudmap/metrics.js';
import { createReadCaches, defaultCacheTtls } from '../../src/cloudmap/read-caches.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';
import { unlimited, FakeClock } from '../../src/testing/index.js';

const setup = () => {
  const clock = new FakeClock();
  const fake = createFakeCloudMap();
  const ns = fake.seedNamespace('demo');
  const svc = fake.seedService('demo', 'web');
  const other = fake.seedService('demo', 'db');
  const client = createCloudMapClient(fake, { clock, limiter: unlimited });
  return { clock, fake, ns, svc, other, client };
};

describe('Cloud Map client caches', () => {
  it('drops expired entries once a TTL, not only when their key is read again', async () => {
    const clock = new FakeClock();
    const cache = createReadCache<number>({ ttlMs: 5_000, clock });
    for (let i = 0; i < 100; i++) await cache.get(`svc-${String(i)}`, () => Promise.resolve(i));
    expect(cache.size).toBe(100);
    clock.advance(5_001);
    await cache.get('svc-0', () => Promise.resolve(0)); // any read sweeps what expired
    expect(cache.size).toBe(1);
  });

  it('sweepExpired drops what expired without a read, at most once a TTL', async () => {
    const clock = new FakeClock();
    const cache = createReadCache<number>({ ttlMs: 5_000, clock });
    for (let i = 0; i < 10; i++) await cache.get(`svc-${String(i)}`, () => Promise.resolve(i));
    clock.advance(2_000);
    await cache.get('late', () => Promise.resolve(-1)); // stored at 2 s, expires at 7 s
    clock.advance(3_001); // 5.001 s: the first ten expired
    cache.sweepExpired();
    expect(cache.size).toBe(1);
    clock.advance(2_000); // 7.001 s: 'late' expired, but the last sweep was under a TTL ago
    cache.sweepExpired();
    expect(cache.size).toBe(1);
    clock.advance(3_000); // 10.001 s: a TTL since the last sweep
    cache.sweepExpired();
    expect(cache.size).toBe(0);
  });

  it('the client sweeps all four caches (what the client calls before every call)', async () => {
    const clock = new FakeClock();
    const caches = createReadCaches({ ttl: defaultCacheTtls, clock, metrics: noopCloudMapMetrics });
    await caches.namespaces.get('', () => Promise.resolve([]));
    await caches.services.get('ns-1', () => Promise.resolve([]));
    await caches.instances.get('srv-1', () => Promise.resolve([]));
    await caches.discover.get('demo\0web\0', () => Promise.resolve({ instances: [], revision: 1 }));
    const sizes = () =>
      [caches.namespaces, caches.services, caches.instances, caches.discover].map((c) => c.size);
    expect(sizes()).toEqual([1, 1, 1, 1]);
    clock.advance(Math.max(...Object.values(defaultCacheTtls)) + 1);
    caches.sweepExpired();
    expect(sizes()).toEqual([0, 0, 0, 0]);
  });

  it('serves repeated reads from cache until the TTL passes', async () => {
    const { clock, fake, ns, client } = setup();
    await client.listNamespaces();
    await client.listNamespaces();
    await client.listServices(ns.id);
    await client.listServices(ns.id);
    expect(fake.calls('listNamespaces')).toBe(1);
    expect(fake.calls('listServices')).toBe(1);
    clock.advance(60_001);
    await client.listNamespaces();
    await client.listServices(ns.id);
    expect(fake.calls('listNamespaces')).toBe(2);
    expect(fake.calls('listServices')).toBe(2);
    await client.close();
  });

  it('a write evicts the written service only, so the next read sees it', async () => {
    const { fake, ns, svc, other, client } = setup();
    await client.listServices(ns.id); // learns service names for discover eviction
    await client.listNamespaces();
    expect(await client.listInstances(svc.id)).toEqual([]);
    expect((await client.discoverInstances('demo', 'web')).instances).toEqual([]);
    await client.listInstances(other.id);
    await client.discoverInstances('demo', 'db');
    await client.registerInstance(svc.id, 'i-1', { a: '1' });
    expect(await client.listInstances(svc.id)).toEqual([{ id: 'i-1', attributes: { a: '1' } }]);
    expect((await client.discoverInstances('demo', 'web')).instances).toHaveLength(1);
    await client.listInstances(other.id);
    await client.discoverInstances('demo', 'db');
    expect(fake.calls('listInstances')).toBe(3); // web twice, db once
    expect(fake.calls('discoverInstances')).toBe(3);
    await client.deregisterInstance(svc.id, 'i-1');
    expect(await client.listInstances(svc.id)).toEqual([]);
    await client.close();
  });

  it('discover caches per query and is evicted when the revision moves', async () => {
    const { fake, svc, client } = setup();
    await client.discoverInstances('demo', 'web', { cluster: 'c1' });
    await client.discoverInstances('demo', 'web', { cluster: 'c1' });
    await client.discoverInstances('demo', 'web', { cluster: 'c2' });
    expect(fake.calls('discoverInstances')).toBe(2);
    // Another writer (another cluster) registers behind our back.
    fake.seedInstance(svc.id, 'x', { cluster: 'c1' });
    expect((await client.discoverInstances('demo', 'web', { cluster: 'c1' })).instances).toEqual(
      [],
    );
    await client.discoverInstancesRevision('demo', 'web');
    expect(
      (await client.discoverInstances('demo', 'web', { cluster: 'c1' })).instances,
    ).toHaveLength(1);
    await client.close();
  });

  it('createService and createHttpNamespace evict the lists they change', async () => {
    const { ns, client } = setup();
    expect(await client.listServices(ns.id)).toHaveLength(2);
    await client.createService(ns.id, 'api', {});
    expect(await client.listServices(ns.id)).toHaveLength(3);
    expect(await client.listNamespaces()).toHaveLength(1);
    await client.createHttpNamespace('team-b', {});
    expect(await client.listNamespaces()).toHaveLength(2);
    await client.close();
  });

  it('concurrent reads share one call; a read in flight during a write is not cached', async () => {
    const clock = new FakeClock();
    let release: () => void = () => {};
    let hold = false;
    const fake = createFakeCloudMap({
      beforeCall: (op) =>
        hold && op === 'listInstances' ? new Promise<void>((r) => (release = r)) : undefined,
    });
    fake.seedNamespace('demo');
    const svc = fake.seedService('demo', 'web');
    const client = createCloudMapClient(fake, { clock, limiter: unlimited });
    hold = true;
    const a = client.listInstances(svc.id);
    const b = client.listInstances(svc.id);
    await Promise.resolve();
    await client.registerInstance(svc.id, 'i-1', {});
    release();
    hold = false;
    expect(await a).toEqual([{ id: 'i-1', attributes: {} }]); // the fake reads state at release
    await b;
    expect(fake.calls('listInstances')).toBe(1);
    await client.listInstances(svc.id);
    expect(fake.calls('listInstances')).toBe(2);
    await client.close();
  });

  it('a failed read is not cached', async () => {
    const { fake, svc, client } = setup();
    fake.failNext('listInstances', 'AccessDeniedException');
    await expect(client.listInstances(svc.id)).rejects.toMatchObject({
      code: 'AccessDeniedException',
    });
    await expect(client.listInstances(svc.id)).resolves.toEqual([]);
    await client.close();
  });
});

describe('read cache', () => {
  it('ttl 0 shares in-flight reads but stores nothing', async () => {
    const clock = new FakeClock();
    const lookups: string[] = [];
    const cache = createReadCache<number>({
      ttlMs: 0,
      clock,
      onLookup: (r) => lookups.push(r),
    });
    let n = 0;
    const load = async () => ++n;
    const [x, y] = await Promise.all([cache.get('k', load), cache.get('k', load)]);
    expect([x, y]).toEqual([1, 1]);
    expect(await cache.get('k', load)).toBe(2);
    expect(lookups).toEqual(['miss', 'shared', 'miss']);
    expect(cache.size).toBe(0);
  });
});
