import { HEARTBEAT_SERVICE_NAME } from '@cloudmap-mcs/core';
import { createFakeCloudMap, createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createTargetResolver } from '../src/cloudmap-target.js';
import { createHeartbeats } from '../src/heartbeat.js';
import { createExportMetrics } from '../src/metrics.js';
import { createPendingWrites } from '../src/pending-writes.js';

/**
 * The heartbeat on the fake Cloud Map with operations completed by hand: a renewal asked for
 * while this process's previous write of the same heartbeat is in progress waits for it
 * (Cloud Map would refuse it with DuplicateRequest) and says so, instead of failing.
 */
describe('heartbeat renewals', () => {
  it('a renewal while the previous write is in progress waits for it, then states the new feed', async () => {
    const cm = createFakeCloudMap({ operationMode: 'manual' });
    cm.seedNamespace('shop');
    cm.seedService('shop', HEARTBEAT_SERVICE_NAME);
    const logger = createMemoryLogger();
    const pending = createPendingWrites();
    let now = 1_000_000;
    const written: { feed?: { epoch: string; seq: number } } = {};
    const hb = createHeartbeats({
      cloudMap: cm,
      resolver: createTargetResolver({ cloudMap: cm, tags: {}, logger, now: () => now }),
      pending,
      identity: () => ({ clusterId: 'c1', clustersetId: 'set' }),
      now: () => now,
      periodMs: 30_000,
      logger,
      feed: () => written.feed,
    });
    const exports = new Map([['shop', ['cart']]]);
    await hb.sync(exports);
    const registers = () => cm.calls('registerInstance');
    expect(registers()).toBe(1);
    expect(hb.takeDeferred()).toBe(false);

    // The feed's first record of a new epoch was written: the heartbeat must state it, but
    // its first write is still in progress.
    written.feed = { epoch: 'e1', seq: 0 };
    now += 500;
    await hb.sync(exports);
    expect(registers()).toBe(1);
    expect(hb.takeDeferred()).toBe(true);
    expect(hb.takeDeferred()).toBe(false); // reading it clears it
    expect(logger.find('heartbeat failed')).toEqual([]);

    // Once it completes, the next sync states the epoch.
    cm.completeAllOperations();
    for (const o of cm.operations)
      pending.complete(o.targets?.SERVICE ?? '', o.targets?.INSTANCE ?? '', o.operationId);
    await hb.sync(exports);
    expect(registers()).toBe(2);
    cm.completeAllOperations();
    const [instance] = cm.instancesOf('shop', HEARTBEAT_SERVICE_NAME);
    expect(instance?.attributes['FEED_EPOCH']).toBe('e1');
  });

  it('a write of the heartbeat this process did not submit still in progress (a restart): waits quietly, then renews', async () => {
    const cm = createFakeCloudMap();
    cm.seedNamespace('shop');
    cm.seedService('shop', HEARTBEAT_SERVICE_NAME);
    const logger = createMemoryLogger();
    const renewals: string[] = [];
    const hb = createHeartbeats({
      cloudMap: cm,
      resolver: createTargetResolver({ cloudMap: cm, tags: {}, logger, now: () => 1_000_000 }),
      pending: createPendingWrites(),
      identity: () => ({ clusterId: 'c1', clustersetId: 'set' }),
      now: () => 1_000_000,
      periodMs: 30_000,
      logger,
      onRenewal: (r) => renewals.push(r),
    });
    const exports = new Map([['shop', ['cart']]]);
    cm.failNext('registerInstance', 'DuplicateRequest');
    await hb.sync(exports);
    expect(logger.find('heartbeat failed')).toEqual([]);
    expect(renewals).toEqual([]); // neither a success nor a failure
    expect(hb.takeDeferred()).toBe(true);
    await hb.sync(exports);
    expect(cm.instancesOf('shop', HEARTBEAT_SERVICE_NAME)).toHaveLength(1);
    expect(renewals).toEqual(['success']);
  });
});

/**
 * The heartbeat metrics on the fake Cloud Map and a hand-moved wall clock: renewals counted
 * by result, and the last-success gauge (the age the CloudMapMCSExportHeartbeatFailing alert
 * watches) that stays within a period and a third while healthy and idle, and only ages while
 * writes fail.
 */
describe('heartbeat metrics', () => {
  const setup = () => {
    const cm = createFakeCloudMap();
    for (const ns of ['shop', 'web']) cm.seedNamespace(ns);
    const logger = createMemoryLogger();
    const pending = createPendingWrites();
    const registry = new Registry();
    const leaderRegistry = new Registry();
    const metrics = createExportMetrics(registry, leaderRegistry);
    const clock = { now: 1_700_000_000_000 };
    const hb = createHeartbeats({
      cloudMap: cm,
      resolver: createTargetResolver({ cloudMap: cm, tags: {}, logger, now: () => clock.now }),
      pending,
      identity: () => ({ clusterId: 'c1', clustersetId: 'set' }),
      now: () => clock.now,
      periodMs: 30_000,
      logger,
      onRenewal: (r) => metrics.heartbeatRenewal(r),
      onCurrent: (ms) => metrics.heartbeatCurrent(ms),
    });
    // What the controller does when Cloud Map confirms a write.
    const sync = async (exports: Map<string, string[]>) => {
      await hb.sync(exports);
      for (const o of cm.operations)
        pending.complete(o.targets?.SERVICE ?? '', o.targets?.INSTANCE ?? '', o.operationId);
    };
    const value = async (r: Registry, line: string) => {
      const found = (await r.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
    };
    const renewals = (result: string) =>
      value(registry, `mcs_export_heartbeat_renewals_total{result="${result}"}`);
    const age = async () => {
      const at = await value(leaderRegistry, 'mcs_export_heartbeat_last_success_timestamp_seconds');
      return at === undefined ? undefined : clock.now / 1000 - at;
    };
    return { cm, clock, sync, renewals, age, leaderRegistry };
  };
  const both = new Map([
    ['shop', ['cart']],
    ['web', ['front']],
  ]);

  it('count renewals and keep the age within a period and a third while healthy', async () => {
    const { cm, clock, sync, renewals, age } = setup();
    expect(await renewals('success')).toBe(0);
    expect(await renewals('failure')).toBe(0);
    expect(await age()).toBeUndefined(); // no value before the first sync, not 0
    await sync(both);
    expect(await renewals('success')).toBe(2);
    expect(await age()).toBe(0);
    // An idle agent syncs every 10 s; a heartbeat is rewritten once a period old.
    let maxAge = 0;
    for (let i = 0; i < 30; i++) {
      clock.now += 10_000;
      await sync(both);
      maxAge = Math.max(maxAge, (await age()) ?? Infinity);
    }
    expect(maxAge).toBeLessThanOrEqual(30);
    expect(await renewals('success')).toBe(2 + 2 * 10);
    expect(await renewals('failure')).toBe(0);
    expect(cm.calls('registerInstance')).toBe(22);
  });

  it('age while writes fail, from the last good renewal, and recover with the next one', async () => {
    const { cm, clock, sync, renewals, age } = setup();
    await sync(both);
    const lastGood = clock.now;
    cm.failAlways('registerInstance', 'AccessDeniedException');
    for (let i = 0; i < 9; i++) {
      clock.now += 10_000;
      await sync(both);
    }
    // Due at 30 s: every sync from then on fails in both namespaces.
    expect(await renewals('failure')).toBe(2 * 7);
    expect(await age()).toBe((clock.now - lastGood) / 1000);
    expect(await age()).toBeGreaterThan(60);
    cm.clearFaults();
    clock.now += 10_000;
    await sync(both);
    expect(await age()).toBe(0);
    expect(await renewals('success')).toBe(4);
  });

  it('exporting nothing is current; a heartbeat never written ages from its first failure', async () => {
    const { cm, clock, sync, renewals, age } = setup();
    await sync(new Map());
    expect(await age()).toBe(0);
    clock.now += 60_000;
    await sync(new Map());
    expect(await age()).toBe(0);
    cm.failAlways('registerInstance', 'ThrottlingException');
    clock.now += 10_000;
    const first = clock.now;
    const shop = new Map([['shop', ['cart']]]);
    await sync(shop);
    for (let i = 0; i < 6; i++) {
      clock.now += 10_000;
      await sync(shop);
    }
    expect(await renewals('failure')).toBe(7);
    expect(await age()).toBe((clock.now - first) / 1000);
    cm.clearFaults();
    clock.now += 10_000;
    await sync(shop);
    expect(await age()).toBe(0);
    // A namespace no longer exported no longer holds the age: shop's heartbeat (40 s old,
    // failing) goes, web's (failing since now) stays.
    cm.failAlways('registerInstance', 'ThrottlingException');
    clock.now += 40_000;
    await sync(both);
    expect(await age()).toBe(40);
    await sync(new Map([['web', ['front']]]));
    expect(await age()).toBe(0);
  });
});
