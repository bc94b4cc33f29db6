import {
  Attr,
  chunkKey,
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedInstanceId,
  feedServiceName,
  type CloudMapPort,
  type FeedEntry,
} from '@cloudmap-mcs/core';
import {
  createFakeCloudMap,
  createMemoryLogger,
  FakeClock,
  type FakeCloudMap,
} from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import type { PollPeriods } from '../src/poller/schedule.js';
import { createPoller } from '../src/poller/poller.js';
import {
  CLUSTERSET,
  endpoints,
  exportOf,
  heartbeat,
  publish,
  clockTicker,
} from './cloudmap-fixtures.js';

/**
 * The import poller following the clusterset change feed (ADR 0018) on the fake Cloud Map and
 * the fake clock: what it reads, and that it converges whatever the feed says or fails to say.
 */

const periods = {
  slowMs: 60_000,
  fastMs: 5_000,
  feedMs: 1_000,
  heartbeatMs: 30_000,
  resyncMs: 3_600_000,
  jitter: 0,
  maxBackoffMs: 120_000,
};
const FEED_SERVICE = feedServiceName(CLUSTERSET);

/** Writes cluster `clusterId`'s feed instance as an export agent would (or a hostile one). */
function writeFeed(
  cm: FakeCloudMap,
  clusterId: string,
  record: { epoch: string; seq: number; floor?: number; changes: [string, number][] },
): void {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const svc = cm.serviceByName(ns.name, FEED_SERVICE) ?? cm.seedService(ns.name, FEED_SERVICE);
  const changes: FeedEntry[] = record.changes.map(([key, seq]) => {
    const [namespace = '', name = ''] = key.split('/');
    return { namespace, name, seq };
  });
  const { instance } = encodeFeed({
    cluster: { clusterId, clustersetId: CLUSTERSET },
    epoch: record.epoch,
    seq: record.seq,
    floor: record.floor ?? 0,
    updatedAtMs: 1,
    changes,
  });
  cm.seedInstance(svc.id, instance.id, instance.attributes);
}

/**
 * Counts DiscoverInstances / DiscoverInstancesRevision per service; `readDelayMs` makes a
 * service's DiscoverInstances answer that much fake time later (a slow read).
 */
function counted(port: CloudMapPort, clock: FakeClock, readDelayMs?: (name: string) => number) {
  const calls: string[] = [];
  const wrapped: CloudMapPort = {
    ...port,
    listNamespaces: () => port.listNamespaces(),
    listServices: (id) => port.listServices(id),
    discoverInstances: async (ns, name, q) => {
      calls.push(`read ${ns}/${name}`);
      const delay = readDelayMs?.(name) ?? 0;
      if (delay > 0) await new Promise<void>((resolve) => clock.setTimer(resolve, delay));
      return port.discoverInstances(ns, name, q);
    },
    discoverInstancesRevision: (ns, name) => {
      calls.push(`rev ${ns}/${name}`);
      return port.discoverInstancesRevision(ns, name);
    },
  };
  const count = (prefix: string) => calls.filter((c) => c.startsWith(prefix)).length;
  return { wrapped, calls, count };
}

function setup(
  local: string[] = ['shop'],
  over: Partial<PollPeriods> = {},
  readDelayMs?: (name: string) => number,
) {
  const cm = createFakeCloudMap();
  const clock = new FakeClock();
  const changes: string[] = [];
  const logger = createMemoryLogger();
  const { wrapped, calls, count } = counted(cm, clock, readDelayMs);
  const poller = createPoller({
    port: wrapped,
    clock,
    logger,
    clustersetId: CLUSTERSET,
    periods: { ...periods, ...over },
    random: () => 0,
    now: () => clock.now(),
    isLocalNamespace: (n) => local.includes(n),
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: () => {},
  });
  const tick = clockTicker(clock, 500, 6);
  /**
   * c1's export agent's heartbeat in shop: renewed every 30 s while `renewing`, stating
   * `feed` (its feed's epoch and last written sequence number; undefined: the feed is off).
   */
  const writer: { feed: { epoch: string; seq: number } | undefined; renewing: boolean } = {
    feed: { epoch: 'e1', seq: 1 },
    renewing: true,
  };
  let renewals = 0;
  const renew = (renewedAtMs = 1_000 + ++renewals): Promise<void> =>
    heartbeat(cm, 'shop', 'c1', renewedAtMs, undefined, writer.feed);
  const renewEvery30s = (): void => {
    clock.setTimer(() => {
      if (writer.renewing) void renew();
      renewEvery30s();
    }, 30_000);
  };
  /**
   * Starts with services a..d of c1 exported, c1's feed at epoch e1, seq 1 and its heartbeat
   * saying so; returns once c1's heartbeat vouches for its feed and each service had the one
   * check of its own that follows (5 s), so from then on the feed covers them.
   */
  const started = async (names = ['a', 'b', 'c', 'd']): Promise<void> => {
    for (const name of names) await publish(cm, exportOf('c1', 'shop', name, endpoints(2, 1)));
    await renew();
    renewEvery30s();
    writeFeed(cm, 'c1', { epoch: 'e1', seq: 1, changes: names.map((n) => [`shop/${n}`, 1]) });
    poller.start();
    await tick(5_000);
    changes.length = 0;
    calls.length = 0;
  };
  return { cm, clock, poller, changes, calls, count, tick, logger, started, writer, renew };
}

describe('poller with the change feed', () => {
  it('idle: one feed revision per feed period, one heartbeat read per heartbeat period, no per-service checks', async () => {
    const t = setup();
    await t.started();
    expect(t.poller.synced).toBe(true);
    expect(t.poller.feedCovered).toBe(4);
    await t.tick(54_000); // from 5 s to 59 s
    expect(t.count(`rev ${FEED_NAMESPACE_NAME}/`)).toBe(54);
    // Every 30 s (at 30 s, next at 60 s), one read and no revision check: renewals move the
    // heartbeat's revision about every period, so a check would cost a second call.
    expect(t.count('read shop/_mcs-heartbeat')).toBe(1);
    expect(t.count('rev shop/_mcs-heartbeat')).toBe(0);
    expect(t.calls.filter((c) => /^(rev|read) shop\/[a-d]$/.test(c))).toEqual([]);
    // As long as c1's heartbeat keeps being renewed and vouching, no service is checked.
    await t.tick(600_000);
    expect(t.calls.filter((c) => /^rev shop\/[a-d]$/.test(c))).toEqual([]);
    expect(t.poller.feedCovered).toBe(4);
    expect(t.changes).toEqual([]);
    await t.poller.stop();
  });

  it('checks the feed at wall-clock multiples of its period, wherever it started (ADR 0018)', async () => {
    // Importers started at different instants must check at the same instants, so a change
    // is seen everywhere after one wait, not after the longest of several independent ones.
    const cm = createFakeCloudMap();
    const clock = new FakeClock();
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(2, 1)));
    writeFeed(cm, 'c1', { epoch: 'e1', seq: 1, changes: [['shop/a', 1]] });
    const checks: { early: number[]; late: number[] } = { early: [], late: [] };
    const start = (who: 'early' | 'late') =>
      createPoller({
        port: {
          ...cm,
          listNamespaces: () => cm.listNamespaces(),
          listServices: (id) => cm.listServices(id),
          discoverInstances: (ns, name, q) => cm.discoverInstances(ns, name, q),
          discoverInstancesRevision: (ns, name) => {
            if (ns === FEED_NAMESPACE_NAME) checks[who].push(clock.now());
            return cm.discoverInstancesRevision(ns, name);
          },
        },
        clock,
        logger: createMemoryLogger(),
        clustersetId: CLUSTERSET,
        periods,
        random: () => 0.5,
        now: () => clock.now() + 1_700_000_000_123, // a wall clock not on a period boundary
        isLocalNamespace: () => true,
        onServiceChange: () => {},
        onHeartbeatChange: () => {},
      });
    const tick = clockTicker(clock, 10, 6);
    const early = start('early');
    early.start();
    await tick(370);
    const late = start('late');
    late.start();
    await tick(4_000);
    await early.stop();
    await late.stop();
    const wall = (ms: number) => ms + 1_700_000_000_123;
    // The first feed check of each is the slow round's baseline; the rest are the fast rounds.
    const fastRounds = (xs: number[]) => xs.slice(1);
    expect(fastRounds(checks.early).length).toBeGreaterThanOrEqual(3);
    for (const t of [...fastRounds(checks.early), ...fastRounds(checks.late)])
      expect(wall(t) % periods.feedMs).toBe(0);
    expect(fastRounds(checks.late)).toEqual(
      fastRounds(checks.early).filter((t) => t > 370 && t >= fastRounds(checks.late)[0]!),
    );
  });

  it('after an outage the heartbeats are re-confirmed as resumed, though the feed kept them unread', async () => {
    // Issue 11 item 1 with the feed: while the poller only probes, the heartbeat service is not
    // read at all, so no failed read of it marks a blind period; the outage itself must.
    const t = setup();
    await t.started();
    await t.tick(31_000); // the heartbeat service has been checked once since the start
    expect(t.poller.heartbeatService('shop')?.resumedAtMs).toBeUndefined();
    for (const op of [
      'listNamespaces',
      'listServices',
      'discoverInstances',
      'discoverInstancesRevision',
    ] as const)
      t.cm.failAlways(op, 'ServiceUnavailable');
    await t.tick(120_000);
    expect(t.poller.health().reachable).toBe(false);
    t.cm.clearFaults();
    const liftedAt = t.clock.now();
    await t.tick(31_000); // the heartbeat period: the heartbeat service is checked again
    expect(t.poller.health().reachable).toBe(true);
    const hb = t.poller.heartbeatService('shop');
    expect(hb?.confirmedAtMs).toBeGreaterThanOrEqual(liftedAt);
    expect(hb?.resumedAtMs).toBeGreaterThanOrEqual(liftedAt);
    await t.poller.stop();
  });

  it('a change named by the feed costs one feed read and one read of that service', async () => {
    const t = setup();
    await t.started();
    await publish(t.cm, exportOf('c1', 'shop', 'b', endpoints(3, 1)));
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 2, changes: [['shop/b', 2]] });
    await t.tick(1_000);
    expect(t.changes).toEqual(['shop/b']);
    expect(t.calls.filter((c) => c.startsWith('read'))).toEqual([
      `read ${FEED_NAMESPACE_NAME}/${FEED_SERVICE}`,
      'read shop/b',
    ]);
    await t.poller.stop();
  });

  it('a new service the feed names is read at once, without waiting for the listing', async () => {
    const t = setup(['shop', 'fresh']);
    await t.started();
    await publish(t.cm, exportOf('c1', 'shop', 'new', endpoints(1, 1)));
    // A namespace this importer has never tracked (the exporter just created it).
    await publish(t.cm, exportOf('c1', 'fresh', 'web', endpoints(1, 1)));
    await heartbeat(t.cm, 'fresh', 'c1', 1_000);
    // Not local here: named, but never read (namespace sameness).
    await publish(t.cm, exportOf('c1', 'elsewhere', 'x', endpoints(1, 1)));
    writeFeed(t.cm, 'c1', {
      epoch: 'e1',
      seq: 3,
      changes: [
        ['shop/new', 2],
        ['fresh/web', 3],
        ['elsewhere/x', 3],
      ],
    });
    await t.tick(1_000);
    expect(t.changes.sort()).toEqual(['fresh/web', 'shop/new']);
    expect(t.poller.get('fresh', 'web')?.instances.length).toBeGreaterThan(0);
    expect(t.poller.heartbeatService('fresh')?.instances).toHaveLength(1);
    expect(t.calls.some((c) => c.includes('elsewhere'))).toBe(false);
    // The next listing keeps them (listed now) and drops nothing.
    await t.tick(60_000);
    expect(t.poller.get('shop', 'new')).toBeDefined();
    // A name Cloud Map does not have is not tracked.
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 4, changes: [['shop/ghost', 4]] });
    await t.tick(1_000);
    // a, b, c, d, new and shop's heartbeats; web and fresh's heartbeats; no ghost.
    expect(t.poller.tracked).toBe(8);
    await t.poller.stop();
  });

  it('lost, duplicated and reordered feed writes: every change is read; a stale copy re-reads nothing', async () => {
    const t = setup();
    await t.started();
    // Two writes between polls: the reader only ever sees the second (the first is "lost").
    await publish(t.cm, exportOf('c1', 'shop', 'a', endpoints(3, 1)));
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 2, changes: [['shop/a', 2]] });
    await publish(t.cm, exportOf('c1', 'shop', 'c', endpoints(3, 1)));
    writeFeed(t.cm, 'c1', {
      epoch: 'e1',
      seq: 3,
      changes: [
        ['shop/c', 3],
        ['shop/a', 2],
      ],
    });
    await t.tick(1_000);
    expect(t.changes.sort()).toEqual(['shop/a', 'shop/c']);
    // A stale copy (seq 2) and a duplicate of seq 3 show up: nothing is read again.
    t.changes.length = 0;
    t.calls.length = 0;
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 2, changes: [['shop/a', 2]] });
    await t.tick(1_000);
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 3, changes: [['shop/c', 3]] });
    await t.tick(1_000);
    // What was handed out is pruned to the current record (bounded memory): the stale copy
    // re-reads nothing, and the newer record coming back re-reads only the entry the stale
    // copy had dropped, once, and announces no change (the data did not move). A sequence
    // number going back is not an honest advance: the heartbeats are read again at once (a
    // replayed record its writer no longer vouches for stops counting within a round or two).
    expect(t.calls.filter((c) => c.startsWith('read shop/'))).toEqual([
      'read shop/_mcs-heartbeat',
      'read shop/c',
    ]);
    expect(t.changes).toEqual([]);
    await t.poller.stop();
  });

  it('sweeps on a gap of a vouched record', async () => {
    const t = setup();
    await t.started();
    const sweeps = () =>
      t.logger.entries.filter((e) => e.message.includes('reading everything')).length;
    const readsOfAll = () => ['a', 'b', 'c', 'd'].every((n) => t.calls.includes(`read shop/${n}`));
    // Gap: changes 2..9 dropped from the record (floor 9 > the reader's cursor 1).
    await publish(t.cm, exportOf('c1', 'shop', 'd', endpoints(4, 1)));
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 10, floor: 9, changes: [['shop/a', 10]] });
    await t.tick(1_000);
    expect(sweeps()).toBe(1);
    expect(readsOfAll()).toBe(true);
    expect(t.changes).toContain('shop/d'); // the dropped change, found by the sweep
    await t.poller.stop();
  });

  it("a new epoch, a new writer or a writer gone sweeps nothing: the services holding that writer's records are checked one by one until it is vouched for again, once more, then not", async () => {
    const t = setup();
    await t.started();
    const sweeps = () => t.count('read shop/') - t.count('read shop/_mcs-heartbeat');
    const checksOf = (name: string) => t.count(`rev shop/${name}`);
    const checkedEach = (n: number) => ['a', 'b', 'c', 'd'].every((x) => checksOf(x) === n);
    // c1 restarts: its record names a new epoch; its heartbeat states the old one until the
    // renewal the reader sees next (up to 30 s later).
    writeFeed(t.cm, 'c1', { epoch: 'e2', seq: 0, changes: [] });
    await t.tick(5_000);
    expect(t.poller.feedCovered).toBe(0);
    expect(checkedEach(1)).toBe(true);
    await t.tick(5_000);
    expect(checkedEach(2)).toBe(true); // every check period while not vouched
    expect(sweeps()).toBe(0);
    t.writer.feed = { epoch: 'e2', seq: 0 };
    await t.renew();
    await t.tick(25_000); // the heartbeat read at 30 s vouches; each service checked once more
    t.calls.length = 0;
    await t.tick(6_000);
    expect(t.poller.feedCovered).toBe(4);
    await t.tick(30_000); // (the backstop's first read, of one service, falls at 60 s)
    expect(t.calls.filter((c) => /^rev shop\/[a-d]$/.test(c))).toEqual([]);
    t.calls.length = 0;
    // A new writer (no heartbeat yet) with no records in these services changes nothing here.
    writeFeed(t.cm, 'c2', { epoch: 'x', seq: 5, changes: [] });
    await t.tick(10_000);
    expect(t.calls.filter((c) => /^(rev|read) shop\/[a-d]$/.test(c))).toEqual([]);
    expect(t.poller.feedCovered).toBe(4);
    // c1's record gone (its feed turned off and cleaned up): its services go back to their
    // own checks, one by one, without a sweep.
    const svc = t.cm.serviceByName(FEED_NAMESPACE_NAME, FEED_SERVICE)!;
    await t.cm.deregisterInstance(
      svc.id,
      feedInstanceId({ clusterId: 'c1', clustersetId: CLUSTERSET }),
    );
    t.calls.length = 0;
    await t.tick(5_000);
    expect(t.poller.feedCovered).toBe(0);
    expect(checkedEach(1)).toBe(true);
    expect(sweeps()).toBe(0);
    await t.poller.stop();
  });

  it('a heartbeat service the writer creates after the namespace was read is found within a check period, not at the next listing', async () => {
    const t = setup();
    for (const name of ['a', 'b'])
      await publish(t.cm, exportOf('c1', 'shop', name, endpoints(1, 1)));
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 1, changes: [] });
    t.poller.start();
    await t.tick(10_000);
    expect(t.poller.heartbeatService('shop')).toBeUndefined();
    expect(t.poller.feedCovered).toBe(0);
    // Looked for at the check period while missing: one call each time.
    expect(t.count('read shop/_mcs-heartbeat')).toBeLessThanOrEqual(3);
    await t.renew(); // c1's agent creates it (its first heartbeat in shop)
    await t.tick(5_000);
    expect(t.poller.heartbeatService('shop')).toBeDefined();
    await t.tick(5_000); // vouched; a and b get the one check of their own that follows
    expect(t.poller.feedCovered).toBe(2);
    // Found: from now on read at the heartbeat period only.
    t.calls.length = 0;
    await t.tick(29_000);
    expect(t.count('read shop/_mcs-heartbeat')).toBe(1);
    await t.poller.stop();
  });

  it('without a feed every service keeps its revision check; a feed appearing takes over once vouched and checked', async () => {
    const t = setup();
    for (const name of ['a', 'b'])
      await publish(t.cm, exportOf('c1', 'shop', name, endpoints(1, 1)));
    // The writer's heartbeat states the feed it is about to write.
    await t.renew();
    t.poller.start();
    await t.tick(0);
    t.calls.length = 0;
    await t.tick(10_000);
    expect(t.count('rev shop/a')).toBe(2);
    expect(t.poller.feedCovered).toBe(0);
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 1, changes: [] });
    await t.tick(1_000);
    // Vouched from now on, but a and b were last checked before: one check each first.
    expect(t.poller.feedCovered).toBe(0);
    await t.tick(5_000);
    expect(t.poller.feedCovered).toBe(2);
    t.calls.length = 0;
    await t.tick(20_000);
    expect(t.count('rev shop/a')).toBe(0);
    await t.poller.stop();
  });

  it('with the feed on, a listing of many services is stretched to its budget; without one it is not', async () => {
    const names = Array.from({ length: 250 }, (_, i) => `s${String(i)}`);
    const listings = async (over: Partial<PollPeriods>): Promise<number> => {
      const t = setup(['shop'], over);
      await t.started(names);
      let n = 0;
      const list = t.cm.listNamespaces.bind(t.cm);
      t.cm.listNamespaces = () => {
        n++;
        return list();
      };
      await t.tick(480_000);
      await t.poller.stop();
      return n;
    };
    // 250 services: ListNamespaces + 3 pages = 4 calls; at 2 a minute, one listing per 120 s.
    expect(await listings({ listingBudgetPerMinute: 2 })).toBe(4);
    expect(await listings({})).toBe(8); // every 60 s
  });

  it('a hostile or broken feed instance is logged and ignored; its cluster stays per-service', async () => {
    const t = setup();
    await t.started();
    // c9 claims to be c1 (wrong instance id), and another instance has garbage attributes.
    const svc = t.cm.serviceByName(FEED_NAMESPACE_NAME, FEED_SERVICE)!;
    t.cm.seedInstance(svc.id, 'c9-feed', {
      CLUSTERSET_ID: CLUSTERSET,
      CLUSTER_ID: 'c1',
      RECORD: 'feed',
      FEED_EPOCH: 'e1',
      FEED_SEQ: '99',
      FEED_FLOOR: '0',
      FEED_UPDATED_AT: '1',
      FEED_CHANGES: 'shop/a:99',
    });
    t.cm.seedInstance(svc.id, 'c8-feed', {
      CLUSTERSET_ID: CLUSTERSET,
      CLUSTER_ID: 'c8',
      RECORD: 'feed',
      FEED_SEQ: 'lots',
    });
    // c8's records in a service: c8 has no valid feed, so the service keeps its own check.
    await publish(t.cm, exportOf('c8', 'shop', 'foreign', endpoints(1, 8)));
    await t.tick(2_000); // two feed rounds
    expect(t.count('read shop/a')).toBe(0); // the forged entry read nothing
    await t.tick(59_000); // the listing finds it
    expect(t.poller.get('shop', 'foreign')).toBeDefined();
    const warnings = t.logger.entries.filter((e) => e.message === 'change feed instance ignored');
    expect(warnings.map((w) => w.fields['instanceId']).sort()).toEqual(['c8-feed', 'c9-feed']);
    t.calls.length = 0;
    await publish(t.cm, exportOf('c8', 'shop', 'foreign', endpoints(2, 8)));
    t.changes.length = 0;
    await t.tick(5_000);
    expect(t.changes).toEqual(['shop/foreign']);
    // Logged once, not every round.
    await t.tick(5_000);
    expect(
      t.logger.entries.filter((e) => e.message === 'change feed instance ignored'),
    ).toHaveLength(2);
    await t.poller.stop();
  });

  it('a service written by a cluster without a feed (the AWS controller) is picked up by its own check, and so are the others while it has records', async () => {
    const t = setup();
    await t.started();
    // The Go controller's records in a feed-covered service: nothing announces them, but the
    // next listing shows b's instance count moved, and its revision check reads them.
    await publish(t.cm, exportOf('go-1', 'shop', 'b', endpoints(1, 7)));
    await t.tick(5_000);
    expect(t.changes).toEqual([]);
    await t.tick(56_000);
    expect(t.changes).toEqual(['shop/b']);
    // From then on, while a writer without a feed has records anywhere, no service counts as
    // covered: each has its own revision check at the fast period, b and the others alike.
    expect(t.poller.feedCovered).toBe(0);
    t.changes.length = 0;
    await publish(t.cm, exportOf('go-1', 'shop', 'b', endpoints(2, 7)));
    await t.tick(5_000);
    expect(t.changes).toEqual(['shop/b']);
    // Its first records in another service the feed covered (the interop suite's service
    // exported from both sides at once) are read within a fast period, not at the listing.
    t.changes.length = 0;
    await publish(t.cm, exportOf('go-1', 'shop', 'c', endpoints(1, 9)));
    await t.tick(5_000);
    expect(t.changes).toEqual(['shop/c']);
    await t.poller.stop();
  });
});

/** Writes `clusterId`'s feed record with `names` (any number: the fake takes what Cloud Map's limits would not). */
function forgeFeed(
  cm: FakeCloudMap,
  clusterId: string,
  epoch: string,
  seq: number,
  names: string[],
): void {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const svc = cm.serviceByName(ns.name, FEED_SERVICE) ?? cm.seedService(ns.name, FEED_SERVICE);
  const { instance } = encodeFeed({
    cluster: { clusterId, clustersetId: CLUSTERSET },
    epoch,
    seq,
    floor: 0,
    updatedAtMs: 1,
    changes: [],
  });
  const attributes = { ...instance.attributes };
  const texts = names.map((n) => `${n}:${String(seq)}`);
  for (let chunk = 0; texts.length > 0; chunk++) {
    const parts: string[] = [];
    while (texts.length > 0 && [...parts, texts[0]].join(',').length <= 1_024)
      parts.push(texts.shift()!);
    attributes[chunkKey(Attr.FeedChanges, chunk)] = parts.join(',');
  }
  cm.seedInstance(svc.id, instance.id, attributes);
}

describe('the feed is an accelerator, never a source of truth (issue 31)', () => {
  /** Ticks until `key` is announced; how long that took (fake ms), or Infinity after `maxMs`. */
  const readWithin = async (t: ReturnType<typeof setup>, key: string, maxMs: number) => {
    for (let waited = 0; waited <= maxMs; waited += 250) {
      if (t.changes.includes(key)) return waited;
      await t.tick(250);
    }
    return Infinity;
  };
  const unvouchedLines = (t: ReturnType<typeof setup>) =>
    t.logger.entries
      .filter((e) => e.message.startsWith('change feed record not vouched for by its heartbeat'))
      .map((e) => `${e.level} ${String(e.fields['clusterId'])} ${String(e.fields['reason'])}`);

  it('stale feed: the writer restarted with the feed off, its old record stays; a same-count endpoint change is read once its heartbeat is, then within one check period', async () => {
    const t = setup();
    await t.started();
    await t.tick(20_000); // 25 s: shop's heartbeats are read next at 30 s
    t.logger.clear();
    // c1's agent restarts with the feed off: it renews its heartbeat at once, stating no feed;
    // its last record stays in Cloud Map, unchanged.
    t.writer.feed = undefined;
    await t.renew();
    // A pod of c1 replaced in b: same endpoint count, a new IP. The feed names nothing.
    await publish(t.cm, exportOf('c1', 'shop', 'b', endpoints(2, 9)));
    // Read in the round after the reader's next heartbeat read (5 s away here, 30 s at most).
    expect(await readWithin(t, 'shop/b', 30_000 + 5_000)).toBeLessThanOrEqual(5_000 + 1_000);
    expect(JSON.stringify(t.poller.get('shop', 'b')?.instances)).toContain('10.9.0.1');
    // From then on every change of c1's is read within one per-service check period (5 s).
    t.changes.length = 0;
    await publish(t.cm, exportOf('c1', 'shop', 'c', endpoints(2, 11)));
    expect(await readWithin(t, 'shop/c', 5_000)).toBeLessThanOrEqual(5_000);
    expect(t.poller.feedCovered).toBe(0);
    // Said once, not every round.
    await t.tick(60_000);
    expect(unvouchedLines(t)).toEqual(['info c1 no-heartbeat']);
    await t.poller.stop();
  });

  it("forged FEED_SEQ=2147483647 in the same epoch: a later real change is read within one check period, the writer's next real entry at once, and it is logged once", async () => {
    const t = setup();
    await t.started();
    await t.tick(10_000);
    t.logger.clear();
    forgeFeed(t.cm, 'c1', 'e1', 2_147_483_647, ['shop/a']);
    await t.tick(1_000);
    // A real change the (forged) record does not name, the writer not writing meanwhile.
    t.changes.length = 0;
    await publish(t.cm, exportOf('c1', 'shop', 'b', endpoints(2, 9)));
    expect(await readWithin(t, 'shop/b', 5_000)).toBeLessThanOrEqual(5_000);
    expect(unvouchedLines(t)).toEqual(['info c1 seq-ahead']);
    // The writer's next write (seq 2) replaces the forged record: no cursor was pushed past
    // it, so its entry is read in the next round, and the feed is vouched for again.
    t.changes.length = 0;
    await publish(t.cm, exportOf('c1', 'shop', 'c', endpoints(3, 1)));
    writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 2, changes: [['shop/c', 2]] });
    await t.tick(1_000);
    expect(t.changes).toEqual(['shop/c']);
    expect(t.logger.find('change feed vouched for again by its heartbeat')).toHaveLength(1);
    await t.tick(6_000);
    expect(t.poller.feedCovered).toBe(4);
    expect(unvouchedLines(t)).toEqual(['info c1 seq-ahead']);
    await t.poller.stop();
  });

  it("feed flood: a made-up cluster naming 600 services, replaced every second, costs a few reads a second; a vouched writer's change is read in the next round", async () => {
    const t = setup();
    await t.started();
    t.logger.clear();
    const reads = () => t.count('read ');
    const perSecond: number[] = [];
    const names = Array.from({ length: 600 }, (_, i) => `shop/flood-${String(i)}`);
    for (let n = 1; n <= 30; n++) {
      forgeFeed(t.cm, 'evil', 'x', n, names);
      if (n === 20) {
        // A real change of c1, named by its (vouched) feed.
        await publish(t.cm, exportOf('c1', 'shop', 'b', endpoints(2, 9)));
        writeFeed(t.cm, 'c1', { epoch: 'e1', seq: 2, changes: [['shop/b', 2]] });
      }
      const before = reads();
      await t.tick(1_000);
      perSecond.push(reads() - before);
      if (n === 20) expect(t.changes).toEqual(['shop/b']);
    }
    // Measured: 3 a second (the feed's own read, and the 2 reads of the unvouched budget).
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(10);
    expect(unvouchedLines(t)).toEqual(['info evil no-heartbeat']);
    // The names that do not exist are not tracked.
    expect(t.poller.tracked).toBe(5);
    await t.poller.stop();
  });

  it("heartbeat reads are not delayed by the feed's reads", async () => {
    // Every read of a flood name takes 20 s to answer; the feed names them from 29 s on.
    const t = setup(['shop'], {}, (name) => (name.startsWith('flood-') ? 20_000 : 0));
    await t.started();
    await t.tick(23_000); // 28 s
    const names = Array.from({ length: 600 }, (_, i) => `shop/flood-${String(i)}`);
    for (let n = 1; n <= 40; n++) {
      forgeFeed(t.cm, 'evil', 'x', n, names);
      await t.tick(1_000);
    }
    // Shop's heartbeats are read every 30 s (at 30 s and 60 s), on time, while reads of the
    // flood are pending: the feed's reads never hold the heartbeat reads.
    const hb = t.poller.heartbeatService('shop');
    expect(hb?.fetchedAtMs).toBe(60_000);
    expect(t.count('read shop/_mcs-heartbeat')).toBe(2);
    // One batch of the feed's reads at a time: 2 reads every 20 s here.
    expect(t.count('read shop/flood-')).toBeLessThanOrEqual(6);
    // The flood ends and the last slow reads answer (stopping waits for them).
    await t.cm.deregisterInstance(
      t.cm.serviceByName(FEED_NAMESPACE_NAME, FEED_SERVICE)!.id,
      feedInstanceId({ clusterId: 'evil', clustersetId: CLUSTERSET }),
    );
    await t.tick(20_000);
    await t.poller.stop();
  });

  it('a heartbeat whose renewal stops changing vouches for nothing one TTL after this reader last saw it change, whatever time it carries', async () => {
    const t = setup();
    await t.started();
    await t.tick(20_000); // 25 s
    // c1's agent dies after one last renewal, stamped years ahead (a clock far off, or forged).
    t.writer.renewing = false;
    await t.renew(Date.UTC(2100, 0, 1));
    await t.tick(5_000); // read at 30 s: a change of renewal, seen now on this reader's clock
    t.logger.clear();
    await t.tick(119_000); // 149 s: within the TTL (120 s) of 30 s
    expect(t.poller.feedCovered).toBe(4);
    expect(unvouchedLines(t)).toEqual([]);
    await t.tick(2_000); // 151 s: past it
    expect(unvouchedLines(t)).toEqual(['info c1 heartbeat-expired']);
    expect(t.poller.feedCovered).toBe(0);
    // Its services are checked one by one again: a change is read within one check period.
    t.changes.length = 0;
    await publish(t.cm, exportOf('c1', 'shop', 'd', endpoints(2, 9)));
    expect(await readWithin(t, 'shop/d', 5_000)).toBeLessThanOrEqual(5_000);
    await t.poller.stop();
  });
});
