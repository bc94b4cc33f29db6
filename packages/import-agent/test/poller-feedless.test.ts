import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  type CloudMapPort,
} from '@cloudmap-mcs/core';
import {
  createFakeCloudMap,
  createMemoryLogger,
  FakeClock,
  type FakeCloudMap,
} from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../src/poller/poller.js';
import {
  CLUSTERSET,
  clockTicker,
  endpoints,
  exportOf,
  heartbeat,
  publish,
} from './cloudmap-fixtures.js';

/**
 * Issue 35 (ADR 0018, decision 13): a namespace holding services of a writer without a change
 * feed (the AWS controller: its records carry a cluster ID but it writes no feed record) is
 * listed every fast period, so that writer's new services are imported within 10 s instead of
 * at the 60 s listing; namespaces of feed writers only are listed as often as before. The
 * import agent's defaults, on the fake clock.
 */
const periods = {
  slowMs: 60_000,
  fastMs: 5_000,
  feedMs: 1_200,
  heartbeatMs: 30_000,
  resyncMs: 3_600_000,
  resyncBudgetPerMinute: 2,
  listingBudgetPerMinute: 2,
  jitter: 0.1,
  maxBackoffMs: 300_000,
};

/** c1 writes the feed (and its heartbeat states it); `go-1` writes records only. */
async function feedWriter(cm: FakeCloudMap, namespace: string, names: string[]): Promise<void> {
  for (const name of names) await publish(cm, exportOf('c1', namespace, name, endpoints(2, 1)));
  await heartbeat(cm, namespace, 'c1', 1_000, undefined, { epoch: 'e1', seq: 1 });
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const svcName = feedServiceName(CLUSTERSET);
  const svc = cm.serviceByName(ns.name, svcName) ?? cm.seedService(ns.name, svcName);
  const { instance } = encodeFeed({
    cluster: { clusterId: 'c1', clustersetId: CLUSTERSET },
    epoch: 'e1',
    seq: 1,
    floor: 0,
    updatedAtMs: 1,
    changes: names.map((name) => ({ namespace, name, seq: 1 })),
  });
  cm.seedInstance(svc.id, instance.id, instance.attributes);
}

function setup(local: string[]) {
  const cm = createFakeCloudMap();
  const clock = new FakeClock();
  const changes: string[] = [];
  const listings: string[] = [];
  const port: CloudMapPort = {
    ...cm,
    listNamespaces: () => cm.listNamespaces(),
    listServices: async (id) => {
      const all = await cm.listNamespaces();
      listings.push(all.find((n) => n.id === id)?.name ?? id);
      return cm.listServices(id);
    },
    discoverInstances: (ns, name, q) => cm.discoverInstances(ns, name, q),
    discoverInstancesRevision: (ns, name) => cm.discoverInstancesRevision(ns, name),
  };
  const poller = createPoller({
    port,
    clock,
    logger: createMemoryLogger(),
    clustersetId: CLUSTERSET,
    periods,
    random: () => 0.5,
    now: () => clock.now(),
    isLocalNamespace: (n) => local.includes(n),
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: () => {},
  });
  const tick = clockTicker(clock, 100, 6);
  const listed = (ns: string) => listings.filter((n) => n === ns).length;
  /** Ticks until `key` is announced; how long that took (fake ms), or Infinity after 70 s. */
  const seenWithin = async (key: string): Promise<number> => {
    for (let waited = 0; waited <= 70_000; waited += 100) {
      if (changes.includes(key)) return waited;
      await tick(100);
    }
    return Infinity;
  };
  return { cm, poller, tick, listed, seenWithin };
}

describe('namespaces of writers without a change feed (issue 35)', () => {
  it('a new service of such a writer is imported within 10 s, wherever in the period it lands', async () => {
    const t = setup(['shop']);
    await feedWriter(t.cm, 'shop', ['a', 'b']);
    await publish(t.cm, exportOf('go-1', 'shop', 'legacy', endpoints(1, 7)));
    t.poller.start();
    await t.tick(70_000);
    const waits: number[] = [];
    // Ten new services, each created at another point of the listing's period.
    for (let i = 0; i < 10; i++) {
      await t.tick(1_300 + 700 * i);
      await publish(t.cm, exportOf('go-1', 'shop', `new-${i}`, endpoints(1, 8 + i)));
      waits.push(await t.seenWithin(`shop/new-${i}`));
    }
    console.log(`new services of a writer without a feed imported after (ms): ${waits.join(', ')}`);
    expect(Math.max(...waits)).toBeLessThanOrEqual(10_000);
    await t.poller.stop();
  });

  it('costs one ListServices per fast period in such a namespace, none more in one of feed writers only', async () => {
    const t = setup(['shop', 'web']);
    await feedWriter(t.cm, 'shop', ['a', 'b']);
    await feedWriter(t.cm, 'web', ['x', 'y']);
    await publish(t.cm, exportOf('go-1', 'shop', 'legacy', endpoints(1, 7)));
    t.poller.start();
    await t.tick(70_000);
    const [shop, web] = [t.listed('shop'), t.listed('web')];
    await t.tick(600_000);
    console.log(
      `ListServices in 10 min: shop (a writer without a feed) ${t.listed('shop') - shop}, web (feed writers only) ${t.listed('web') - web}`,
    );
    // shop: its own listing at the first feed round 5 s after the last listing (every 6 s at
    // the 1.2 s feed period), plus the full listing: at most 12 + 1 a minute.
    expect(t.listed('shop') - shop).toBeGreaterThanOrEqual(100);
    expect(t.listed('shop') - shop).toBeLessThanOrEqual(130);
    // web: the full listing only, every 60 s plus up to 10 % jitter (as before issue 35).
    expect(t.listed('web') - web).toBeGreaterThanOrEqual(9);
    expect(t.listed('web') - web).toBeLessThanOrEqual(10);
    await t.poller.stop();
  });

  it('a namespace of feed writers only is listed by the full listing alone', async () => {
    // The feed names its writers' new services; nothing else is listed more often than before.
    const t = setup(['web']);
    await feedWriter(t.cm, 'web', ['x']);
    t.poller.start();
    await t.tick(70_000);
    const before = t.listed('web');
    await t.tick(50_000);
    expect(t.listed('web') - before).toBeLessThanOrEqual(1);
    await t.poller.stop();
  });
});
