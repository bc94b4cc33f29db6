import {
  decodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  noopLogger,
  type ClusterIdentity,
  type FeedRecord,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createTargetResolver } from '../src/cloudmap-target.js';
import { createFeedWriter, type FeedWriteResult } from '../src/feed-writer.js';

const cluster: ClusterIdentity = { clusterId: 'c1', clustersetId: 'set-1' };
const settle = async (n = 20): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

function setup(
  epochs: string[] = ['e1', 'e2', 'e3'],
  extra: Partial<Parameters<typeof createFeedWriter>[0]> = {},
) {
  const cm = createFakeCloudMap();
  const clock = new FakeClock(0);
  const logger = createMemoryLogger();
  const results: FeedWriteResult[] = [];
  const make = () =>
    createFeedWriter({
      cloudMap: cm,
      resolver: createTargetResolver({ cloudMap: cm, tags: {}, logger: noopLogger, now: () => 0 }),
      identity: () => cluster,
      clock,
      now: () => 1_700_000_000_000 + clock.now(),
      logger,
      newEpoch: () => epochs.shift() ?? 'ex',
      onWrite: (r) => results.push(r),
      ...extra,
    });
  const step = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0; left -= Math.min(left, 100)) {
      clock.advance(Math.min(left, 100));
      await settle();
    }
    await settle();
  };
  const record = (): FeedRecord | undefined => {
    const [instance] = cm.instancesOf(FEED_NAMESPACE_NAME, feedServiceName('set-1'));
    return instance === undefined ? undefined : decodeFeed(instance, 'set-1');
  };
  return { cm, clock, logger, results, make, step, record };
}

describe('change feed writer', () => {
  it('creates the feed namespace and service and writes its epoch at start', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    // The namespace is created first (asynchronous in Cloud Map): the record follows.
    await t.step(5_000);
    expect(t.cm.namespaceByName(FEED_NAMESPACE_NAME)?.type).toBe('HTTP');
    expect(t.record()).toMatchObject({ epoch: 'e1', seq: 0, floor: 0, changes: [] });
    await w.stop();
  });

  it('coalesces changes into at most one write per second, newest first', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    const before = t.cm.calls('registerInstance');
    w.changed('shop', 'cart');
    await t.step(100);
    expect(t.record()?.seq).toBe(1); // the first change after a quiet second goes at once
    w.changed('shop', 'web');
    w.changed('shop', 'api');
    w.changed('shop', 'web');
    await t.step(300);
    expect(t.record()?.seq).toBe(1); // within the second: held
    await t.step(1_000);
    expect(t.cm.calls('registerInstance') - before).toBe(2);
    expect(t.record()).toMatchObject({
      seq: 2,
      floor: 0,
      changes: [
        { namespace: 'shop', name: 'api', seq: 2 },
        { namespace: 'shop', name: 'web', seq: 2 },
        { namespace: 'shop', name: 'cart', seq: 1 },
      ],
    });
    // A service changed again moves up with its new number (one entry per service).
    w.changed('shop', 'cart');
    await t.step(1_100);
    expect(t.record()?.changes.map((c) => `${c.name}:${String(c.seq)}`)).toEqual([
      'cart:3',
      'api:2',
      'web:2',
    ]);
    // Idle: nothing is written.
    const idle = t.cm.calls('registerInstance');
    await t.step(60_000);
    expect(t.cm.calls('registerInstance')).toBe(idle);
    await w.stop();
  });

  it('starts a new epoch on every start (a restart is a new writer to readers)', async () => {
    const t = setup();
    const first = t.make();
    first.start();
    await t.step(5_000);
    first.changed('shop', 'cart');
    await t.step(1_100);
    await first.stop();
    expect(t.record()).toMatchObject({ epoch: 'e1', seq: 1 });
    const second = t.make();
    second.start();
    await t.step(1_100);
    expect(t.record()).toMatchObject({ epoch: 'e2', seq: 0, changes: [] });
    await second.stop();
  });

  it('bounds the window: what does not fit raises the floor (readers sweep)', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    for (let i = 0; i < 400; i++) {
      w.changed('namespace-with-a-long-name', `service-number-${String(i)}-with-a-long-name`);
      await t.step(1_000);
    }
    const r = t.record()!;
    expect(r.seq).toBe(400);
    expect(r.floor).toBeGreaterThan(0);
    // Every change above the floor is listed: the guarantee readers rely on.
    expect(r.changes).toHaveLength(r.seq - r.floor);
    expect(w.state.seq).toBe(400);
    await w.stop();
  });

  it('retries failed writes with backoff, logs once per streak, and loses no change', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    t.cm.failAlways('registerInstance', 'ThrottlingException');
    w.changed('shop', 'cart');
    await t.step(1_100);
    w.changed('shop', 'web');
    await t.step(10_000);
    const failed = t.results.filter((r) => r === 'throttled').length;
    expect(failed).toBeGreaterThanOrEqual(3);
    // Backoff: far fewer than one attempt per second.
    expect(failed).toBeLessThan(8);
    const warnings = t.logger.entries.filter((e) => e.level === 'warn');
    expect(warnings).toHaveLength(1);
    t.cm.clearFaults();
    await t.step(40_000);
    const r = t.record()!;
    expect(r.changes.map((c) => c.name).sort()).toEqual(['cart', 'web']);
    expect(r.floor).toBe(0);
    expect(t.logger.entries.some((e) => e.message === 'change feed writes recovered')).toBe(true);
    await w.stop();
  });

  it('states no written position while writes fail, so the heartbeat stops vouching (issue 31)', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    expect(w.written).toEqual({ epoch: 'e1', seq: 0 });
    t.cm.failAlways('registerInstance', 'ResourceLimitExceeded');
    w.changed('shop', 'cart');
    await t.step(1_100);
    // The record still says seq 0 but misses shop/cart: nothing may vouch for it.
    expect(w.written).toBeUndefined();
    t.cm.clearFaults();
    await t.step(40_000);
    expect(w.written).toEqual({ epoch: 'e1', seq: t.record()?.seq });
    expect(t.record()?.changes.map((c) => c.name)).toEqual(['cart']);
    await w.stop();
  });

  it('a write refused because the previous one is still being applied is retried each second, silently', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    t.cm.failNext('registerInstance', 'DuplicateRequest', 5);
    w.changed('shop', 'cart');
    await t.step(5_500);
    expect(t.results.filter((r) => r === 'duplicate')).toHaveLength(5);
    expect(t.record()?.changes).toEqual([{ namespace: 'shop', name: 'cart', seq: 1 }]);
    expect(t.logger.entries.filter((e) => e.level === 'warn')).toEqual([]);
    await w.stop();
  });

  it('re-resolves the feed service when it was deleted', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    const svc = t.cm.serviceByName(FEED_NAMESPACE_NAME, feedServiceName('set-1'))!;
    for (const i of t.cm.instancesOf(FEED_NAMESPACE_NAME, svc.name))
      await t.cm.deregisterInstance(svc.id, i.id);
    await t.cm.deleteService(svc.id);
    w.changed('shop', 'cart');
    await t.step(10_000);
    expect(t.record()?.changes).toEqual([{ namespace: 'shop', name: 'cart', seq: 1 }]);
    await w.stop();
  });

  it('writes no FEED_NUDGE (ADR 0020: no nudges)', async () => {
    const t = setup();
    const w = t.make();
    w.start();
    await t.step(5_000);
    expect(t.record()).toBeDefined();
    const [instance] = t.cm.instancesOf(FEED_NAMESPACE_NAME, feedServiceName('set-1'));
    expect(instance?.attributes['FEED_NUDGE']).toBeUndefined();
    await w.stop();
  });
});
