import { describe, expect, it } from 'vitest';
import {
  CloudMapError,
  encodeFeed,
  encodeHeartbeat,
  FEED_NAMESPACE_NAME,
  HEARTBEAT_SERVICE_NAME,
  type CloudMapInstance,
} from '@cloudmap-mcs/core';
import { createMemoryLogger, FakeClock } from '@cloudmap-mcs/core/testing';
import { createPeerWatch } from '../src/peer-watch.js';

const svc = (name: string) => ({ namespaceName: 'shop', serviceName: name, namespaceId: 'ns-1' });
const SELF = { clusterId: 'c1', clustersetId: 'set-1' };

/** A feed instance of `clusterId` naming `changes` (`shop/name` → seq). */
const feedOf = (
  clusterId: string,
  epoch: string,
  seq: number,
  changes: [string, number][],
): CloudMapInstance =>
  encodeFeed({
    cluster: { clusterId, clustersetId: 'set-1' },
    epoch,
    seq,
    floor: 0,
    updatedAtMs: 1,
    changes: changes.map(([name, at]) => ({ namespace: 'shop', name, seq: at })),
  }).instance;

/**
 * A revision per service name that the test moves, an optional feed (absent: no feed service),
 * the heartbeats of namespace `shop` (what vouches for each writer's feed record) and instance
 * counts; every per-service revision call is recorded in `calls`, every heartbeat read in
 * `feedCalls` as `heartbeats shop`.
 */
function setup(
  over: {
    budgetPerSecond?: number;
    countBudgetPerMinute?: number;
    failWith?: () => Error | undefined;
  } = {},
) {
  const clock = new FakeClock();
  const revisions = new Map<string, number>();
  const counts = new Map<string, number>();
  const calls: string[] = [];
  const feedCalls: string[] = [];
  const changes: string[] = [];
  const rounds: string[] = [];
  const logger = createMemoryLogger();
  const feed: { instances?: CloudMapInstance[]; revision: number } = { revision: 1 };
  const heartbeats = new Map<string, CloudMapInstance>();
  let renewals = 0;
  const noFeed = () => new CloudMapError('ServiceNotFound', 'no feed', 'discoverInstancesRevision');
  const watch = createPeerWatch({
    cloudMap: {
      discoverInstancesRevision: (ns: string, name: string) => {
        const error = over.failWith?.();
        if (error !== undefined) return Promise.reject(error);
        if (ns === FEED_NAMESPACE_NAME) {
          feedCalls.push('revision');
          return feed.instances === undefined
            ? Promise.reject(noFeed())
            : Promise.resolve(feed.revision);
        }
        calls.push(name);
        return Promise.resolve(revisions.get(name) ?? 1);
      },
      discoverInstances: (ns: string, name: string) => {
        if (name === HEARTBEAT_SERVICE_NAME) {
          feedCalls.push(`heartbeats ${ns}`);
          return Promise.resolve({
            instances: ns === 'shop' ? [...heartbeats.values()] : [],
            revision: 1,
          });
        }
        feedCalls.push('read');
        if (feed.instances === undefined) return Promise.reject(noFeed());
        return Promise.resolve({ instances: feed.instances, revision: feed.revision });
      },
      listServices: (namespaceId: string) => {
        feedCalls.push(`list ${namespaceId}`);
        return Promise.resolve(
          [...counts].map(([name, instanceCount]) => ({
            id: name,
            name,
            namespaceId,
            instanceCount,
          })),
        );
      },
    },
    clock,
    periodMs: 2_000,
    budgetPerSecond: over.budgetPerSecond ?? 100,
    identity: () => SELF,
    countEveryRounds: 3,
    ...(over.countBudgetPerMinute === undefined
      ? {}
      : { countBudgetPerMinute: over.countBudgetPerMinute }),
    jitter: 0,
    onRound: () => rounds.push('ran'),
    onChange: (key) => changes.push(key),
    forget: (ns, name) => changes.push(`forget ${ns}/${name}`),
    logger,
  });
  /** Moves the feed to these instances (a new revision). */
  const setFeed = (instances: CloudMapInstance[]) => {
    feed.instances = instances;
    feed.revision++;
  };
  /**
   * Renews `clusterId`'s heartbeat in `shop` (a new renewal time), stating its feed's epoch
   * and written sequence number (none: a heartbeat without a feed, as with the feed off).
   */
  const beat = (clusterId: string, feedState?: { epoch: string; seq: number }) => {
    heartbeats.set(
      clusterId,
      encodeHeartbeat({
        cluster: { clusterId, clustersetId: 'set-1' },
        renewedAtMs: 1_000_000 + ++renewals,
        periodSeconds: 30,
        ...(feedState === undefined ? {} : { feed: feedState }),
      }),
    );
  };
  /** Advances to the next round and lets its calls settle. */
  const round = async () => {
    clock.advance(2_000);
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return {
    clock,
    revisions,
    counts,
    calls,
    feedCalls,
    changes,
    rounds,
    watch,
    round,
    logger,
    setFeed,
    beat,
    heartbeats,
  };
}

/** The requeued keys (without the cache evictions that precede them). */
function keys(changes: readonly string[]): string[] {
  return changes.filter((c) => !c.startsWith('forget '));
}

describe('peer watch without a change feed: a revision check per exported service', () => {
  it('requeues a key only when its revision moves past the one the reconcile read', async () => {
    const { revisions, calls, changes, watch, round } = setup();
    revisions.set('cart', 7);
    watch.watch('shop/cart', svc('cart'), 7);
    watch.start();
    await round();
    expect(calls).toEqual(['cart']);
    expect(changes).toEqual([]);
    revisions.set('cart', 9); // another cluster registered
    await round();
    expect(changes).toEqual(['shop/cart']);
    await round();
    expect(changes).toEqual(['shop/cart']);
    await watch.stop();
  });

  it('a revision the reconcile already read is no change (its own writes)', async () => {
    const { revisions, changes, watch, round } = setup();
    revisions.set('cart', 3);
    watch.watch('shop/cart', svc('cart'), 3);
    watch.start();
    await round();
    revisions.set('cart', 5);
    watch.watch('shop/cart', svc('cart'), 5); // the reconcile after our write read 5
    watch.watch('shop/cart', svc('cart'), 4); // an older cached read never goes back
    await round();
    expect(changes).toEqual([]);
    await watch.stop();
  });

  it('without a revision from the reconcile, the first check is the baseline', async () => {
    const { revisions, changes, watch, round } = setup();
    revisions.set('cart', 4);
    watch.watch('shop/cart', svc('cart'));
    watch.start();
    await round();
    expect(changes).toEqual([]);
    revisions.set('cart', 6);
    await round();
    expect(changes).toEqual(['shop/cart']);
    await watch.stop();
  });

  it('stops checking an un-watched key', async () => {
    const { calls, watch, round } = setup();
    watch.watch('shop/cart', svc('cart'), 1);
    watch.watch('shop/web', svc('web'), 1);
    watch.start();
    await round();
    watch.unwatch('shop/cart');
    await round();
    expect(calls).toEqual(['cart', 'web', 'web']);
    expect(watch.size()).toBe(1);
    await watch.stop();
    await round();
    expect(calls).toHaveLength(3);
  });

  it('more exports than the budget stretch the period', async () => {
    /** When the first round starts, with `count` keys checked each round (no feed). */
    const firstRoundAt = async (count: number, budgetPerSecond: number): Promise<number> => {
      const { watch, clock, feedCalls } = setup({ budgetPerSecond });
      for (let i = 0; i < count; i++) watch.watch(`shop/s${i}`, svc(`s${i}`), 1);
      watch.start();
      let at = 0;
      while (feedCalls.length === 0 && at < 10_000) {
        clock.advance(100);
        at += 100;
        for (let i = 0; i < 20; i++) await Promise.resolve();
      }
      await watch.stop();
      return at;
    };
    expect(await firstRoundAt(100, 100)).toBe(2_000);
    expect(await firstRoundAt(300, 100)).toBe(3_000);
    expect(await firstRoundAt(5_000, 0)).toBe(2_000);
  });

  it('a Cloud Map outage is one warning, its end one info line; a missing service none', async () => {
    let error: Error | undefined;
    const { watch, round, logger } = setup({ failWith: () => error });
    watch.watch('shop/cart', svc('cart'), 1);
    watch.start();
    error = new CloudMapError('ServiceUnavailable', 'down', 'discoverInstancesRevision');
    await round();
    await round();
    error = undefined;
    await round();
    error = new CloudMapError('ServiceNotFound', 'gone', 'discoverInstancesRevision');
    await round();
    const lines = logger.entries.filter((e) => e.level !== 'debug').map((e) => e.message);
    expect(lines).toEqual([
      'peer revision checks failing; conflicts follow other clusters on resync',
      'peer revision checks recovered',
    ]);
    await watch.stop();
  });
});

describe('peer watch over the change feed (ADR 0018)', () => {
  it('requeues the keys other clusters name; no per-service checks; own entries are not changes', async () => {
    const t = setup();
    t.beat('c2', { epoch: 'b', seq: 1 });
    t.setFeed([feedOf('c1', 'a', 1, [['cart', 1]]), feedOf('c2', 'b', 1, [])]);
    t.watch.watch('shop/cart', svc('cart'), 1, ['c2']);
    t.watch.watch('shop/web', svc('web'), 1, []);
    t.watch.start();
    await t.round(); // baseline
    // The first read sets the cursors and checks every watched key once (a change announced
    // between a key's reconcile and that read would be adopted unseen otherwise).
    expect(keys(t.changes).sort()).toEqual(['shop/cart', 'shop/web']);
    // c2's heartbeat has just vouched for its record: cart, which holds c2's records, gets
    // one revision check of its own (the feed vouches only for what comes after).
    expect(t.calls).toEqual(['cart']);
    t.changes.length = 0;
    t.calls.length = 0;
    t.setFeed([feedOf('c1', 'a', 2, [['web', 2]]), feedOf('c2', 'b', 2, [['cart', 2]])]);
    await t.round();
    expect(t.changes).toEqual(['forget shop/cart', 'shop/cart']); // fresh reads first
    await t.round();
    expect(t.changes).toEqual(['forget shop/cart', 'shop/cart']); // feed unmoved: one revision call, nothing read
    expect(t.calls).toEqual([]);
    expect(t.feedCalls.filter((c) => c === 'read')).toHaveLength(2);
    // The watched namespace's heartbeats: read at the first round, next after 30 s.
    expect(t.feedCalls.filter((c) => c === 'heartbeats shop')).toHaveLength(1);
    await t.watch.stop();
  });

  it('a key with records of a cluster that does not write the feed keeps its revision check', async () => {
    const t = setup();
    t.beat('c2', { epoch: 'b', seq: 1 });
    t.setFeed([feedOf('c1', 'a', 1, []), feedOf('c2', 'b', 1, [])]);
    t.watch.watch('shop/cart', svc('cart'), 1, ['go-1']);
    t.watch.watch('shop/web', svc('web'), 1, ['c2']);
    t.watch.start();
    await t.round();
    // The first read sets the cursors and checks every watched key once (a change announced
    // between a key's reconcile and that read would be adopted unseen otherwise).
    expect(keys(t.changes).sort()).toEqual(['shop/cart', 'shop/web']);
    expect(t.calls.sort()).toEqual(['cart', 'web']);
    t.changes.length = 0;
    t.calls.length = 0;
    t.revisions.set('cart', 2);
    await t.round();
    expect(t.calls).toEqual(['cart']);
    expect(t.changes).toEqual(['shop/cart']);
    await t.watch.stop();
  });

  it('a writer restart (new epoch) or a new writer: its keys are checked one by one until its heartbeat vouches, once more, then not; nothing is requeued wholesale', async () => {
    const t = setup();
    t.beat('c2', { epoch: 'b', seq: 4 });
    t.beat('c4', { epoch: 'd', seq: 1 });
    t.setFeed([feedOf('c1', 'a', 1, []), feedOf('c2', 'b', 4, []), feedOf('c4', 'd', 1, [])]);
    t.watch.watch('shop/cart', svc('cart'), 1, ['c2']);
    t.watch.watch('shop/web', svc('web'), 1, ['c4']);
    t.watch.watch('shop/api', svc('api'), 1, []);
    t.watch.start();
    await t.round();
    expect(keys(t.changes).sort()).toEqual(['shop/api', 'shop/cart', 'shop/web']);
    t.changes.length = 0;
    await t.round();
    t.calls.length = 0;
    // c2 restarts: a new epoch in its record; its heartbeat still states the old one.
    t.setFeed([feedOf('c1', 'a', 1, []), feedOf('c2', 'b2', 0, []), feedOf('c4', 'd', 1, [])]);
    await t.round();
    await t.round();
    expect(t.calls).toEqual(['cart', 'cart']);
    expect(keys(t.changes)).toEqual([]);
    const notVouched = t.logger.entries.filter((e) =>
      e.message.startsWith('change feed record not vouched for'),
    );
    expect(notVouched.map((e) => [e.fields['clusterId'], e.fields['reason']])).toEqual([
      ['c2', 'epoch-mismatch'],
    ]);
    // Its heartbeat, renewed with the new epoch, is read at the next 30 s: cart is checked
    // once more in that round, then no longer.
    t.beat('c2', { epoch: 'b2', seq: 0 });
    const heartbeatReads = () => t.feedCalls.filter((c) => c === 'heartbeats shop').length;
    const before = heartbeatReads();
    while (heartbeatReads() === before) await t.round();
    expect(t.calls.at(-1)).toBe('cart');
    t.calls.length = 0;
    for (let i = 0; i < 3; i++) await t.round();
    expect(t.calls).toEqual([]);
    // A new writer (no heartbeat read yet) whose records api now holds: api is checked every
    // round, cart and web are not, and nothing is requeued.
    t.setFeed([
      feedOf('c1', 'a', 1, []),
      feedOf('c2', 'b2', 0, []),
      feedOf('c4', 'd', 1, []),
      feedOf('c3', 'x', 1, []),
    ]);
    t.watch.watch('shop/api', svc('api'), 1, ['c3']);
    await t.round();
    await t.round();
    expect(t.calls).toEqual(['api', 'api']);
    expect(keys(t.changes)).toEqual([]);
    await t.watch.stop();
  });

  it('a record its heartbeat does not vouch for (feed off, or a forged sequence number) leaves the keys holding its records on their own checks', async () => {
    const t = setup();
    t.beat('c2', { epoch: 'b', seq: 1 });
    t.setFeed([feedOf('c2', 'b', 1, [])]);
    t.watch.watch('shop/cart', svc('cart'), 1, ['c2']);
    t.watch.start();
    await t.round();
    await t.round();
    t.calls.length = 0;
    // c2's agent restarted with the feed off: its heartbeat states no feed, its old record stays.
    t.beat('c2');
    for (let i = 0; i < 15; i++) await t.round(); // the next heartbeat read (30 s)
    t.calls.length = 0;
    t.changes.length = 0;
    t.revisions.set('cart', 2); // a change the stale feed does not name
    await t.round();
    expect(t.calls).toEqual(['cart']);
    expect(keys(t.changes)).toEqual(['shop/cart']);
    // The feed back on, then a record pushed far past what the heartbeat states.
    t.beat('c2', { epoch: 'b', seq: 1 });
    for (let i = 0; i < 15; i++) await t.round();
    t.setFeed([feedOf('c2', 'b', 2_147_483_647, [])]);
    await t.round();
    t.calls.length = 0;
    t.changes.length = 0;
    t.revisions.set('cart', 3);
    await t.round();
    expect(t.calls).toEqual(['cart']);
    expect(keys(t.changes)).toEqual(['shop/cart']);
    const reasons = t.logger.entries
      .filter((e) => e.message.startsWith('change feed record not vouched for'))
      .map((e) => e.fields['reason']);
    expect(reasons).toEqual(['no-heartbeat', 'seq-ahead']);
    await t.watch.stop();
  });

  it('an instance count that moved requeues the key (a non-writer joined a feed-covered service)', async () => {
    const t = setup();
    t.beat('c2', { epoch: 'b', seq: 1 });
    t.setFeed([feedOf('c1', 'a', 1, []), feedOf('c2', 'b', 1, [])]);
    t.counts.set('cart', 3);
    t.counts.set('web', 2);
    t.watch.watch('shop/cart', svc('cart'), 1, []);
    t.watch.watch('shop/web', svc('web'), 1, []);
    t.watch.start();
    for (let i = 0; i < 3; i++) await t.round(); // the first count is the baseline
    // The first read sets the cursors and checks every watched key once (a change announced
    // between a key's reconcile and that read would be adopted unseen otherwise).
    expect(keys(t.changes).sort()).toEqual(['shop/cart', 'shop/web']);
    t.changes.length = 0;
    t.counts.set('cart', 5);
    for (let i = 0; i < 3; i++) await t.round();
    expect(t.changes).toEqual(['forget shop/cart', 'shop/cart']);
    // One ListServices per namespace every third round, nothing per service.
    expect(t.feedCalls.filter((c) => c.startsWith('list'))).toEqual(['list ns-1', 'list ns-1']);
    expect(t.calls).toEqual([]);
    await t.watch.stop();
  });

  it('instance counts of many services are stretched to the budget (ListServices pages a minute)', async () => {
    const t = setup({ countBudgetPerMinute: 2 });
    t.setFeed([feedOf('c1', 'a', 1, [])]);
    // 450 services in the namespace: 5 pages a count; at 2 pages a minute and a 2 s round,
    // one count every 75 rounds (150 s) instead of every third round.
    for (let i = 0; i < 450; i++) t.counts.set(`s${String(i)}`, 1);
    t.watch.watch('shop/s0', svc('s0'), 1, []);
    t.watch.start();
    for (let i = 0; i < 3 + 150; i++) await t.round();
    const lists = () => t.feedCalls.filter((c) => c.startsWith('list')).length;
    // The first count at round 3 (it learns the size), the next at round 3 + 75, then 153.
    expect(lists()).toBe(3);
    for (let i = 0; i < 74; i++) await t.round();
    expect(lists()).toBe(3);
    await t.round();
    expect(lists()).toBe(4);
    await t.watch.stop();
  });

  it('makes no call while nothing is exported', async () => {
    const t = setup();
    t.setFeed([feedOf('c2', 'b', 1, [['cart', 1]])]);
    t.watch.start();
    for (let i = 0; i < 5; i++) await t.round();
    expect([...t.calls, ...t.feedCalls]).toEqual([]);
    await t.watch.stop();
  });
});

describe('peer watch period (ADR 0020: the import agent tells it nothing)', () => {
  it('runs a round every period, on the feed alone', async () => {
    const t = setup();
    t.setFeed([feedOf('c1', 'a', 1, [])]);
    t.watch.watch('shop/cart', svc('cart'), 1, []);
    t.watch.start();
    for (let i = 0; i < 4; i++) await t.round();
    expect(t.rounds).toEqual(['ran', 'ran', 'ran', 'ran']);
    expect(t.watch.rounds()).toBe(4);
    await t.watch.stop();
  });
});
