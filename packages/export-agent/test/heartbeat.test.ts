import { HEARTBEAT_SERVICE_NAME } from '@cloudmap-mcs/core';
import { createFakeCloudMap, createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createTargetResolver } from '../src/cloudmap-target.js';
import { createHeartbeats } from '../src/heartbeat.js';
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
});
