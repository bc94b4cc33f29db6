import { describe, expect, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createReadCache } from '../../src/cloudmap/cache.js';
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
    const cache = createReadCache<number>({ name: 'discover', ttlMs: 5_000, clock });
    for (let i = 0; i < 100; i++) await cache.get(`svc-${String(i)}`, () => Promise.resolve(i));
    expect(cache.size).toBe(100);
    clock.advance(5_001);
    await cache.get('svc-0', () => Promise.resolve(0)); // any read sweeps what expired
    expect(cache.size).toBe(1);
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
      name: 't',
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
