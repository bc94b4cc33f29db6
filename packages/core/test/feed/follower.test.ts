import { describe, expect, it } from 'vitest';
import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedInstanceId,
  feedServiceName,
  createFeedFollower,
  type Heartbeat,
} from '../../src/index.js';
import {
  createFakeCloudMap,
  createMemoryLogger,
  FakeClock,
  type FakeCloudMap,
} from '../../src/testing/index.js';

/**
 * Core's feed follower (feed/follower.ts) on the fake Cloud Map and the fake clock: what
 * vouches for a writer's record and since when, and that what it remembers stays bounded.
 */

const SET = 'set-1';
const TTL = 120_000;
const SERVICE = feedServiceName(SET);

function setup() {
  const cm = createFakeCloudMap();
  const clock = new FakeClock(1_000_000);
  const logger = createMemoryLogger();
  const follower = createFeedFollower({
    cloudMap: cm,
    clustersetId: SET,
    ownClusterId: 'self',
    heartbeatTtlMs: TTL,
    clock,
    logger,
  });
  return { cm, clock, logger, follower };
}

function feedService(cm: FakeCloudMap) {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  return cm.serviceByName(ns.name, SERVICE) ?? cm.seedService(ns.name, SERVICE);
}

function writeFeed(cm: FakeCloudMap, clusterId: string, epoch: string, seq: number): void {
  const { instance } = encodeFeed({
    cluster: { clusterId, clustersetId: SET },
    epoch,
    seq,
    floor: 0,
    updatedAtMs: 1,
    changes: [],
  });
  cm.seedInstance(feedService(cm).id, instance.id, instance.attributes);
}

const hb = (
  clusterId: string,
  renewedAtMs: number,
  feed?: { epoch: string; seq: number },
  clustersetId = SET,
): Heartbeat => ({
  cluster: { clusterId, clustersetId },
  renewedAtMs,
  periodSeconds: 30,
  ...(feed === undefined ? {} : { feed }),
});

const notVouched = (logger: ReturnType<typeof createMemoryLogger>) =>
  logger
    .find('change feed record not vouched for by its heartbeat; checking its services one by one')
    .map((e) => `${String(e.fields['clusterId'])} ${String(e.fields['reason'])}`);

describe('feed follower: vouchedSince', () => {
  it('starts when a heartbeat first vouches, holds while it does, ends with the epoch, the renewal or the record, and starts afresh', async () => {
    const { cm, clock, logger, follower } = setup();
    writeFeed(cm, 'c1', 'e1', 3);
    writeFeed(cm, 'self', 's', 9);
    await follower.round(); // baseline
    expect(follower.writers).toEqual(new Set(['c1'])); // its own record is skipped
    expect(follower.vouchedSince('c1')).toBeUndefined();
    expect(notVouched(logger)).toEqual(['c1 no-heartbeat']);

    // Another clusterset's heartbeat claiming c1 vouches for nothing.
    follower.observeHeartbeats('shop', [hb('c1', 5, { epoch: 'e1', seq: 3 }, 'other-set')]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();

    clock.advance(1_000);
    const first = clock.now();
    follower.observeHeartbeats('shop', [hb('c1', 5, { epoch: 'e1', seq: 3 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBe(first);
    expect(logger.find('change feed vouched for again by its heartbeat')).toHaveLength(1);

    // Renewed every 30 s: the same start time throughout.
    for (let i = 1; i <= 10; i++) {
      clock.advance(30_000);
      follower.observeHeartbeats('shop', [hb('c1', 5 + i, { epoch: 'e1', seq: 3 })]);
      await follower.round();
      expect(follower.vouchedSince('c1')).toBe(first);
    }

    // A new epoch in the record that the heartbeat does not state yet.
    writeFeed(cm, 'c1', 'e2', 0);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    clock.advance(30_000);
    follower.observeHeartbeats('shop', [hb('c1', 100, { epoch: 'e2', seq: 0 })]);
    await follower.round();
    const second = clock.now();
    expect(follower.vouchedSince('c1')).toBe(second);

    // The renewal stops changing: read again and again, it still counts from when this
    // reader last saw it change, and one TTL later it vouches for nothing.
    clock.advance(TTL);
    follower.observeHeartbeats('shop', [hb('c1', 100, { epoch: 'e2', seq: 0 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBe(second);
    clock.advance(1);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    // It changes again: vouched from now.
    clock.advance(1_000);
    follower.observeHeartbeats('shop', [hb('c1', 101, { epoch: 'e2', seq: 0 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBe(clock.now());

    // The record goes: nothing to vouch for.
    await cm.deregisterInstance(
      feedService(cm).id,
      feedInstanceId({ clusterId: 'c1', clustersetId: SET }),
    );
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    expect(follower.writers.size).toBe(0);
    expect(notVouched(logger)).toEqual([
      'c1 no-heartbeat',
      'c1 epoch-mismatch',
      'c1 heartbeat-expired',
    ]);
  });

  it('a heartbeat that states no feed, or a record running past what it states, vouches for nothing', async () => {
    const { cm, clock, logger, follower } = setup();
    writeFeed(cm, 'c1', 'e1', 3);
    await follower.round();
    follower.observeHeartbeats('shop', [hb('c1', 5)]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    clock.advance(30_000);
    follower.observeHeartbeats('shop', [hb('c1', 6, { epoch: 'e1', seq: 3 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeDefined();
    writeFeed(cm, 'c1', 'e1', 2_147_483_647);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    // The record stays behind what the heartbeat states for longer than a read's lag.
    writeFeed(cm, 'c1', 'e1', 3);
    clock.advance(30_000);
    follower.observeHeartbeats('shop', [hb('c1', 7, { epoch: 'e1', seq: 10 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeDefined();
    clock.advance(10_000);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    expect(notVouched(logger)).toEqual(['c1 no-heartbeat', 'c1 seq-ahead', 'c1 seq-behind']);
  });
});

describe('feed follower: when it asks for the heartbeats again (recheckHeartbeats)', () => {
  it('not for an honest advance; for a record put back as it was, one going back, or a new epoch', async () => {
    const { cm, follower } = setup();
    writeFeed(cm, 'c1', 'e1', 3);
    writeFeed(cm, 'self', 's', 1);
    expect((await follower.round()).recheckHeartbeats).toBe(false); // baseline
    writeFeed(cm, 'c1', 'e1', 4);
    expect((await follower.round()).recheckHeartbeats).toBe(false);
    // Its own writes move the revision too: an honest advance, even though its record is skipped.
    writeFeed(cm, 'self', 's', 2);
    expect((await follower.round()).recheckHeartbeats).toBe(false);
    // Nothing moved: no read, no question.
    expect((await follower.round()).recheckHeartbeats).toBe(false);
    // Removed and put back as it was between two reads (a replayed copy, or a record its
    // writer retired and someone restored): the revision moved, no record did.
    writeFeed(cm, 'c1', 'e1', 4);
    expect((await follower.round()).recheckHeartbeats).toBe(true);
    expect((await follower.round()).recheckHeartbeats).toBe(false); // reported once
    writeFeed(cm, 'c1', 'e1', 2);
    expect((await follower.round()).recheckHeartbeats).toBe(true);
    writeFeed(cm, 'c1', 'e2', 0);
    expect((await follower.round()).recheckHeartbeats).toBe(true);
  });

  it("the freshest heartbeat speaks for its cluster: stating no feed, an older one's feed in another namespace vouches for nothing", async () => {
    const { cm, clock, follower } = setup();
    writeFeed(cm, 'c1', 'e1', 3);
    await follower.round();
    follower.observeHeartbeats('shop', [hb('c1', 5, { epoch: 'e1', seq: 3 })]);
    follower.observeHeartbeats('web', [hb('c1', 5, { epoch: 'e1', seq: 3 })]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeDefined();
    // c1 restarted with its feed off: the renewal seen in shop states no feed; web is read later.
    clock.advance(2_000);
    follower.observeHeartbeats('shop', [hb('c1', 9)]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
  });
});

describe('feed follower: what it remembers is bounded', () => {
  it("a cluster gone from a namespace's heartbeats is forgotten there; vouched while another namespace still holds it", async () => {
    const { cm, clock, follower } = setup();
    writeFeed(cm, 'c1', 'e1', 1);
    await follower.round();
    const beat = hb('c1', 5, { epoch: 'e1', seq: 1 });
    follower.observeHeartbeats('shop', [beat]);
    follower.observeHeartbeats('web', [beat]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeDefined();
    follower.observeHeartbeats('shop', []);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeDefined(); // still in web
    follower.forgetNamespace('web');
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();

    // Forgotten, not merely hidden: the same heartbeat seen again long after (its renewal
    // unchanged) counts from its new first sight. Remembered, it would count from the first
    // one, more than a TTL ago, and vouch for nothing.
    clock.advance(10 * TTL);
    follower.observeHeartbeats('shop', [beat]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBe(clock.now());
    // Likewise through an empty read of the namespace.
    follower.observeHeartbeats('shop', []);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBeUndefined();
    clock.advance(10 * TTL);
    follower.observeHeartbeats('shop', [beat]);
    await follower.round();
    expect(follower.vouchedSince('c1')).toBe(clock.now());
  });

  it('rejected instances: each named once, at most 256, then one summary line a read; pruned to those still there', async () => {
    const { cm, logger, follower } = setup();
    const svc = feedService(cm);
    const bad = (i: number) => `bad-${String(i)}`;
    const seedBad = (i: number) =>
      cm.seedInstance(svc.id, bad(i), { CLUSTERSET_ID: SET, RECORD: 'feed', FEED_SEQ: 'x' });
    for (let i = 0; i < 300; i++) seedBad(i);
    writeFeed(cm, 'c1', 'e1', 1);
    await follower.round();
    const named = () => logger.find('change feed instance ignored');
    const summaries = () =>
      logger.find('change feed instances ignored (too many to name)').map((e) => e.fields['count']);
    expect(named()).toHaveLength(256);
    expect(summaries()).toEqual([44]);
    // The feed moves: the 256 named are not named again; the rest stay one line.
    writeFeed(cm, 'c1', 'e1', 2);
    await follower.round();
    expect(named()).toHaveLength(256);
    expect(summaries()).toEqual([44, 44]);
    // All gone, then one back: it is named again (nothing about the gone ones is kept).
    for (let i = 0; i < 300; i++) await cm.deregisterInstance(svc.id, bad(i));
    await follower.round();
    seedBad(0);
    await follower.round();
    expect(named()).toHaveLength(257);
    expect(named().at(-1)?.fields['instanceId']).toBe('bad-0');
    expect(summaries()).toHaveLength(2);
  });
});
