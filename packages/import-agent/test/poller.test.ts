import {
  exportsDigest,
  HEARTBEAT_SERVICE_NAME,
  heartbeatInstanceId,
  lastRenewalSeenMs,
  noopLogger,
  type CloudMapPort,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, type FakeCloudMap, FakeClock } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createPoller, type Poller } from '../src/poller/poller.js';
import { fastPeriodFor } from '../src/poller/schedule.js';
import { listingPeriodFor, refreshIntervalFor } from '../src/poller/schedule.js';
import {
  CLUSTERSET,
  endpoints,
  exportOf,
  heartbeat,
  publish,
  settle,
  clockTicker,
  unpublish,
} from './cloudmap-fixtures.js';

const periods = {
  slowMs: 60_000,
  fastMs: 5_000,
  resyncMs: 600_000,
  jitter: 0,
  maxBackoffMs: 120_000,
};

function setup(
  local: string[] = ['shop'],
  budget?: number,
  over: Partial<typeof periods> & { resyncBudgetPerMinute?: number } = {},
) {
  const cm: FakeCloudMap = createFakeCloudMap();
  const clock = new FakeClock();
  const changes: string[] = [];
  const hbChanges: string[] = [];
  const poller: Poller = createPoller({
    port: cm,
    clock,
    logger: noopLogger,
    clustersetId: CLUSTERSET,
    periods: { ...periods, ...over },
    random: () => 0,
    now: () => clock.now(),
    ...(budget === undefined ? {} : { requestBudgetPerSecond: budget }),
    isLocalNamespace: (n) => local.includes(n),
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: (ns) => hbChanges.push(ns),
  });
  const tick = clockTicker(clock, 1_000, 4);
  return { cm, clock, poller, changes, hbChanges, tick };
}

function failEverything(cm: FakeCloudMap): void {
  for (const op of [
    'listNamespaces',
    'listServices',
    'discoverInstances',
    'discoverInstancesRevision',
  ] as const) {
    cm.failAlways(op, 'ServiceUnavailable');
  }
}

describe('poller', () => {
  it('first pass lists, reads every service once, and syncs', async () => {
    const { cm, poller, changes, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(3, 1)));
    await publish(cm, exportOf('c1', 'other', 'x', endpoints(1, 1)));
    cm.resetCounters();
    poller.start();
    await tick(0);
    expect(poller.synced).toBe(true);
    expect(changes).toEqual(['shop/cart']);
    expect(poller.get('shop', 'cart')?.instances).toHaveLength(4);
    // Namespace sameness: "other" does not exist locally and is never read.
    expect(cm.snapshot()).toEqual({ listNamespaces: 1, listServices: 1, discoverInstances: 1 });
    await poller.stop();
  });

  it('idle: only revision checks at the fast period; a change costs one DiscoverInstances', async () => {
    const { cm, poller, changes, tick } = setup();
    for (const name of ['a', 'b', 'c', 'd'])
      await publish(cm, exportOf('c1', 'shop', name, endpoints(2, 1)));
    poller.start();
    await tick(0);
    changes.length = 0;
    cm.resetCounters();
    await tick(59_000); // 11 fast rounds × 4 services, no slow round yet
    expect(cm.snapshot()).toEqual({ discoverInstancesRevision: 44 });
    expect(changes).toEqual([]);
    await publish(cm, exportOf('c1', 'shop', 'b', endpoints(3, 1)));
    cm.resetCounters();
    await tick(5_000);
    expect(changes).toEqual(['shop/b']);
    // one slow round (list) fell due as well, and the backstop's first read (one service,
    // 60 s after the start; then one every 600 s / 4 services)
    expect(cm.snapshot()).toEqual({
      discoverInstancesRevision: 4,
      discoverInstances: 2,
      listNamespaces: 1,
      listServices: 1,
    });
    await poller.stop();
  });

  it('new and removed services are found by the slow round', async () => {
    const { cm, poller, changes, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(1, 1)));
    poller.start();
    await tick(0);
    await publish(cm, exportOf('c1', 'shop', 'new', endpoints(1, 1)));
    await tick(60_000);
    expect(changes).toContain('shop/new');
    changes.length = 0;
    await cm.deleteService(cm.serviceByName('shop', 'a')?.id ?? '').catch(() => undefined);
    // deleteService refuses while instances exist; unexport first, as Cloud Map requires
    await unpublish(cm, 'shop', 'a', 'c1');
    await cm.deleteService(cm.serviceByName('shop', 'a')?.id ?? '');
    await tick(60_000);
    expect(changes).toEqual(['shop/a']);
    expect(poller.get('shop', 'a')).toBeUndefined();
    await poller.stop();
  });

  it('a heartbeat renewal with the same exports lists nothing', async () => {
    const { cm, poller, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(1, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000, exportsDigest(['a']));
    poller.start();
    await tick(0);
    const listed = cm.calls('listServices');
    await heartbeat(cm, 'shop', 'c1', 31_000, exportsDigest(['a']));
    await tick(5_000);
    expect(cm.calls('listServices')).toBe(listed);
    await poller.stop();
  });

  it('records of another clusterset are never read', async () => {
    const { cm, poller, changes, tick } = setup();
    await publish(cm, exportOf('c9', 'shop', 'cart', endpoints(2, 9), {}, 'other-set'));
    poller.start();
    await tick(0);
    expect(poller.get('shop', 'cart')?.instances).toEqual([]);
    expect(changes).toEqual([]);
    await poller.stop();
  });

  it('heartbeat changes are reported per namespace, not as a service', async () => {
    const { cm, poller, hbChanges, changes, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(1, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000);
    poller.start();
    await tick(0);
    expect(hbChanges).toEqual(['shop']);
    expect(poller.heartbeatService('shop')?.instances).toHaveLength(1);
    expect(poller.services('shop').map((s) => s.name)).toEqual(['cart']);
    await heartbeat(cm, 'shop', 'c1', 31_000);
    await tick(5_000);
    expect(hbChanges).toEqual(['shop', 'shop']);
    expect(changes).toEqual(['shop/cart']);
    await poller.stop();
  });

  it('notes when it saw each renewal change on its own clock, and forgets heartbeats that go', async () => {
    const { cm, clock, poller, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(1, 1)));
    // Writers' clocks far off ours: their values are compared, never aged.
    await heartbeat(cm, 'shop', 'c1', 9_000_000);
    await heartbeat(cm, 'shop', 'c2', 5);
    poller.start();
    await tick(0);
    const seen = () => poller.heartbeatService('shop')?.renewalsSeen;
    const startedAt = clock.now();
    expect(lastRenewalSeenMs(seen(), 'c1')).toBe(startedAt);
    await tick(10_000); // re-read, nothing changed: sightings stay
    expect(lastRenewalSeenMs(seen(), 'c1')).toBe(startedAt);
    await heartbeat(cm, 'shop', 'c1', 9_000_001);
    const svc = cm.serviceByName('shop', HEARTBEAT_SERVICE_NAME)!;
    await cm.deregisterInstance(
      svc.id,
      heartbeatInstanceId({ clusterId: 'c2', clustersetId: CLUSTERSET }),
    );
    await tick(5_000);
    const changedAt = lastRenewalSeenMs(seen(), 'c1') ?? 0;
    expect(changedAt).toBeGreaterThan(startedAt + 10_000);
    expect(changedAt).toBeLessThanOrEqual(clock.now());
    expect([...(seen()?.keys() ?? [])]).toEqual(['c1']);
    await poller.stop();
  });

  it('an outage keeps the last good state, reports it, probes with one call per fast period, and recovers', async () => {
    const { cm, poller, changes, tick } = setup();
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      await publish(cm, exportOf('c1', 'shop', name, endpoints(5, 1)));
    poller.start();
    await tick(0);
    changes.length = 0;
    failEverything(cm);
    cm.resetCounters();
    await tick(300_000);
    expect(poller.health().reachable).toBe(false);
    expect(poller.health().message).toMatch(/unreachable; serving the last good state/);
    expect(poller.get('shop', 'a')?.instances).toHaveLength(6);
    expect(changes).toEqual([]);
    // One probe per fast period (60 in 300 s), not a revision call per service per round;
    // the slow and resync rounds back off.
    // (the first round after the failure starts is still a full one: 5 calls)
    expect(cm.calls('discoverInstancesRevision')).toBeLessThanOrEqual(5 + 60);
    expect(cm.calls('discoverInstancesRevision')).toBeGreaterThanOrEqual(59);
    expect(cm.calls('listNamespaces')).toBeLessThan(5);
    cm.clearFaults();
    await tick(5_000);
    expect(poller.health()).toMatchObject({ reachable: true, failingServices: 0 });
    expect(changes).toEqual([]);
    await poller.stop();
  });

  it('after an outage, a change made as it lifted arrives within one fast period', async () => {
    const { cm, poller, changes, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    poller.start();
    await tick(0);
    changes.length = 0;
    failEverything(cm);
    await tick(600_000); // long enough for any doubling backoff to reach its cap
    cm.clearFaults();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(3, 1)));
    await publish(cm, exportOf('c1', 'shop', 'new', endpoints(1, 1)));
    await tick(5_000); // the first probe after the lift falls due at the end of this period
    await tick(0); // …and the slow round it triggers runs at once
    // The changed service via the fast round, the new one via the slow round the first
    // success ran at once (not after the slow round's backoff).
    expect(changes.sort()).toEqual(['shop/cart', 'shop/new']);
    expect(poller.get('shop', 'cart')?.instances).toHaveLength(4);
    await poller.stop();
  });

  it('confirmedAtMs moves with every successful read and stands still during an outage', async () => {
    const { cm, poller, tick, clock } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    poller.start();
    await tick(0);
    await tick(20_000);
    const before = poller.get('shop', 'cart')?.confirmedAtMs ?? 0;
    expect(before).toBeGreaterThanOrEqual(clock.now() - 5_000);
    failEverything(cm);
    await tick(60_000);
    expect(poller.get('shop', 'cart')?.confirmedAtMs).toBe(before);
    cm.clearFaults();
    await tick(5_000);
    expect(poller.get('shop', 'cart')?.confirmedAtMs ?? 0).toBeGreaterThan(before + 60_000);
    await poller.stop();
  });

  it('a fast round whose services were all dropped by a concurrent listing is not an outage', async () => {
    const cm = createFakeCloudMap();
    const clock = new FakeClock();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let hold = false;
    const reports: boolean[] = [];
    const port: CloudMapPort = {
      ...cm,
      discoverInstancesRevision: async (ns, name) => {
        if (hold) await gate;
        return cm.discoverInstancesRevision(ns, name);
      },
    };
    const poller = createPoller({
      port,
      clock,
      logger: noopLogger,
      clustersetId: CLUSTERSET,
      periods,
      random: () => 0,
      isLocalNamespace: (n) => n === 'shop',
      onServiceChange: () => {},
      onHeartbeatChange: () => {},
      onHealthChange: (h) => reports.push(h.reachable),
    });
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(1, 1)));
    poller.start();
    clock.advance(0);
    await settle();
    expect(poller.synced).toBe(true);
    hold = true;
    clock.advance(5_000); // the fast round starts and waits in its revision call
    await settle();
    await unpublish(cm, 'shop', 'a', 'c1');
    await cm.deleteService(cm.serviceByName('shop', 'a')?.id ?? '');
    await poller.refreshNow(); // the listing drops 'a' while its revision call is in flight
    expect(poller.get('shop', 'a')).toBeUndefined();
    release();
    await settle(6);
    expect(poller.health().reachable).toBe(true);
    expect(reports).not.toContain(false);
    await poller.stop();
  });

  it('a resync with no change enqueues nothing', async () => {
    const { cm, poller, changes, tick } = setup();
    await publish(cm, exportOf('c1', 'shop', 'cart', endpoints(2, 1)));
    poller.start();
    await tick(0);
    changes.length = 0;
    cm.resetCounters();
    await tick(600_000);
    expect(cm.calls('discoverInstances')).toBe(1);
    expect(changes).toEqual([]);
    await poller.stop();
  });

  it('the backstop and listing periods: the resync spread over the services, within the budgets', () => {
    const p = { ...periods, resyncMs: 3_600_000, resyncBudgetPerMinute: 3 };
    expect(refreshIntervalFor(p, 100)).toBe(36_000); // every service within the hour
    expect(refreshIntervalFor(p, 1_000)).toBe(20_000); // 3 a minute: every service in 5.6 h
    expect(refreshIntervalFor({ ...p, resyncBudgetPerMinute: 0 }, 1_000)).toBe(3_600);
    expect(refreshIntervalFor(p, 0)).toBe(3_600_000);
    const l = { ...periods, listingBudgetPerMinute: 3 };
    expect(listingPeriodFor(l, 2, false)).toBe(60_000); // 100 services: one page, every minute
    expect(listingPeriodFor(l, 11, true)).toBe(220_000); // 1,000 services: 10 pages + namespaces
    expect(listingPeriodFor(periods, 11, true)).toBe(60_000); // no budget
    // A short slow period with one page per namespace is kept (3 calls every 2 s).
    expect(listingPeriodFor({ ...l, slowMs: 2_000 }, 3, false)).toBe(2_000);
  });

  it('the backstop reads one service at a time, each read longest ago, at a steady rate', async () => {
    // 6 services, resync 600 s → one read every 100 s; budget 0.5/min floors it at 120 s.
    const { cm, poller, changes, tick } = setup(['shop'], undefined, {
      resyncBudgetPerMinute: 0.5,
    });
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const name of names) await publish(cm, exportOf('c1', 'shop', name, endpoints(1, 1)));
    const reads: string[] = [];
    const read = cm.discoverInstances.bind(cm);
    cm.discoverInstances = (ns, name, q) => {
      reads.push(name);
      return read(ns, name, q);
    };
    poller.start();
    await tick(0);
    expect(reads.sort()).toEqual(names); // the start reads everything
    reads.length = 0;
    changes.length = 0;
    await tick(60_000 + 120_000 * 6); // the first backstop read at 60 s, then every 120 s
    expect(reads).toHaveLength(7);
    // Six distinct services first (each the one read longest ago), then the first again.
    expect(new Set(reads.slice(0, 6)).size).toBe(6);
    expect(reads[6]).toBe(reads[0]);
    expect(changes).toEqual([]); // nothing changed, nothing enqueued
    await poller.stop();
  });

  it('the request budget stretches the fast period', async () => {
    expect(fastPeriodFor(periods, 1000, 100)).toBe(10_000);
    expect(fastPeriodFor(periods, 10, 100)).toBe(5_000);
    expect(fastPeriodFor(periods, 1000)).toBe(5_000);
    const { cm, poller, tick } = setup(['shop'], 0.5); // 2 services at 0.5/s → 4 s < 5 s
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      await publish(cm, exportOf('c1', 'shop', name, endpoints(1, 1)));
    poller.start();
    await tick(0);
    cm.resetCounters();
    await tick(50_000); // 5 services at 0.5/s → one round per 10 s
    expect(cm.calls('discoverInstancesRevision')).toBe(25);
    await poller.stop();
  });
});
