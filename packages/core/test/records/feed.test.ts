import { describe, expect, it } from 'vitest';
import {
  Attr,
  checkInstance,
  decodeFeed,
  decodeFeeds,
  encodeFeed,
  feedInstanceId,
  feedServiceName,
  cloudMapLimits,
  MAX_FEED_SEQ,
  type FeedEntry,
  type FeedRecord,
} from '../../src/index.js';

const cluster = { clusterId: 'c1', clustersetId: 'set-1' };
const record = (over: Partial<FeedRecord> = {}): FeedRecord => ({
  cluster,
  epoch: 'k3x9',
  seq: 3,
  floor: 0,
  updatedAtMs: 1_700_000_000_000,
  changes: [
    { namespace: 'shop', name: 'cart', seq: 3 },
    { namespace: 'shop', name: 'web', seq: 2 },
  ],
  ...over,
});
/** `n` distinct services, one per sequence number 1..n, with names of `width` characters. */
const many = (n: number, width = 20): FeedEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    namespace: 'ns',
    name: `s${String(i + 1).padStart(width - 1, '0')}`,
    seq: i + 1,
  }));

describe('feed names', () => {
  it('one service per clusterset, valid Cloud Map names, one instance per cluster', () => {
    expect(feedServiceName('set-1')).toMatch(/^_mcs-feed-[0-9a-f]{12}$/);
    expect(feedServiceName('set-1')).not.toBe(feedServiceName('set-2'));
    expect(feedInstanceId(cluster)).toMatch(/^[0-9a-f]{12}-feed$/);
    expect(feedInstanceId(cluster)).not.toBe(feedInstanceId({ ...cluster, clusterId: 'c2' }));
  });
});

describe('encodeFeed / decodeFeed', () => {
  it('round-trips a record (golden attributes)', () => {
    const { instance, floor, kept } = encodeFeed(record());
    expect(instance.attributes).toEqual({
      CLUSTER_ID: 'c1',
      CLUSTERSET_ID: 'set-1',
      K8S_CONTROLLER: 'cloudmap-mcs',
      MCS_SCHEMA_VERSION: '1',
      MCS_RECORD: 'feed',
      FEED_EPOCH: 'k3x9',
      FEED_SEQ: '3',
      FEED_FLOOR: '0',
      FEED_UPDATED_AT: '1700000000000',
      FEED_CHANGES: 'shop/cart:3,shop/web:2',
    });
    expect(floor).toBe(0);
    expect(kept).toHaveLength(2);
    expect(decodeFeed(instance, 'set-1')).toEqual(record());
  });

  it('keeps one entry per service, its latest sequence number', () => {
    const { kept } = encodeFeed(
      record({
        seq: 5,
        changes: [
          { namespace: 'shop', name: 'cart', seq: 2 },
          { namespace: 'shop', name: 'cart', seq: 5 },
        ],
      }),
    );
    expect(kept).toEqual([{ namespace: 'shop', name: 'cart', seq: 5 }]);
  });

  it.each([
    ['a few changes', 10, 20],
    ['more than one value holds', 60, 20],
    ['more than the instance holds', 400, 20],
    ['long names', 400, 63],
  ])('stays within Cloud Map limits with %s (%i entries)', (_, n, width) => {
    const changes = many(n, width);
    const { instance, floor, kept } = encodeFeed(record({ seq: n, changes }));
    expect(checkInstance(instance)).toEqual([]);
    expect(Object.keys(instance.attributes).length).toBeLessThanOrEqual(
      cloudMapLimits.customAttributesPerInstance,
    );
    const back = decodeFeed(instance);
    // Nothing above the floor is missing: the reader can trust exactly (floor, seq].
    expect(back.changes.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
      changes.filter((e) => e.seq > floor).map((e) => e.seq),
    );
    expect(back.floor).toBe(floor);
    expect(kept).toHaveLength(n - floor);
    if (n >= 400) expect(floor).toBeGreaterThan(0);
    else expect(floor).toBe(0);
  });

  it('drops a whole sequence number, never part of one', () => {
    // 300 services announced by one write (seq 2) after one at seq 1: seq 2 cannot fit whole.
    const big = many(300).map((e) => ({ ...e, seq: 2 }));
    const { floor, kept } = encodeFeed(
      record({ seq: 2, changes: [{ namespace: 'a', name: 'b', seq: 1 }, ...big] }),
    );
    expect(floor).toBe(2);
    expect(kept).toEqual([]);
  });

  it('never lowers the floor it was given', () => {
    expect(encodeFeed(record({ seq: 9, floor: 7, changes: [] })).floor).toBe(7);
  });

  const encoded = encodeFeed(record()).instance;
  const withAttrs = (attrs: Record<string, string | undefined>) => ({
    id: encoded.id,
    attributes: Object.fromEntries(
      Object.entries({ ...encoded.attributes, ...attrs }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>,
  });
  it.each([
    ['not a feed record', withAttrs({ [Attr.Record]: 'heartbeat' }), /not a feed/],
    ['another clusterset', withAttrs({ [Attr.ClustersetId]: 'set-2' }), /clusterset/],
    ['a newer schema', withAttrs({ [Attr.SchemaVersion]: '2' }), /schema version/],
    ['no epoch', withAttrs({ [Attr.FeedEpoch]: undefined }), /missing FEED_EPOCH/],
    ['a bad epoch', withAttrs({ [Attr.FeedEpoch]: 'A B' }), /FEED_EPOCH/],
    ['floor above seq', withAttrs({ [Attr.FeedFloor]: '4' }), /FEED_FLOOR/],
    ['seq beyond the wrap', withAttrs({ [Attr.FeedSeq]: String(MAX_FEED_SEQ + 1) }), /FEED_SEQ/],
    ['an entry above seq', withAttrs({ [Attr.FeedChanges]: 'shop/cart:4' }), /outside/],
    ['an entry at the floor', withAttrs({ [Attr.FeedChanges]: 'shop/cart:0' }), /outside/],
    ['a bad name', withAttrs({ [Attr.FeedChanges]: 'shop/Cart:3' }), /entry/],
    ['a path', withAttrs({ [Attr.FeedChanges]: 'a/b/c:3' }), /entry/],
    ['a stray instance id', { ...encoded, id: 'x-feed' }, /is not c1's/],
  ])('rejects %s', (_, instance, reason) => {
    const { feeds, rejected } = decodeFeeds([instance], { clustersetId: 'set-1' });
    expect(feeds).toEqual([]);
    expect(rejected[0]?.reason).toMatch(reason);
  });

  it('decodes an empty change list', () => {
    expect(decodeFeed(withAttrs({ [Attr.FeedChanges]: undefined })).changes).toEqual([]);
  });
});

describe('records of writers from before ADR 0020', () => {
  it('writes no FEED_NUDGE, and reads a record that has one (ignored, not refused)', () => {
    const { instance } = encodeFeed(record());
    expect(instance.attributes['FEED_NUDGE']).toBeUndefined();
    for (const old of ['10.0.0.5:9446', '-', 'evil.example.com:80']) {
      const decoded = decodeFeed({
        ...instance,
        attributes: { ...instance.attributes, FEED_NUDGE: old },
      });
      expect(decoded).toEqual(decodeFeed(instance));
      const { feeds, rejected } = decodeFeeds(
        [{ ...instance, attributes: { ...instance.attributes, FEED_NUDGE: old } }],
        { clustersetId: 'set-1' },
      );
      expect(rejected).toEqual([]);
      expect(feeds).toHaveLength(1);
    }
  });
});
