import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  type CloudMapPort,
  type Nudge,
} from '@cloudmap-mcs/core';
import {
  createFakeCloudMap,
  createMemoryLogger,
  FakeClock,
  type FakeCloudMap,
} from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../src/poller/index.js';
import { createNudgeTrust } from '../src/poller/nudge-trust.js';
import {
  CLUSTERSET,
  clockTicker,
  endpoints,
  exportOf,
  heartbeat,
  publish,
} from './cloudmap-fixtures.js';

/**
 * Nudges (ADR 0018 decision 11) on the fake Cloud Map and the fake clock: the poller checks
 * the feed at once when nudged, polls it slowly only while every writer nudges it, and goes
 * back to the fast period when a writer does not.
 */

const FEED_SERVICE = feedServiceName(CLUSTERSET);
const OWN = '10.0.0.2:8081';
const periods = {
  slowMs: 60_000,
  fastMs: 5_000,
  feedMs: 1_000,
  heartbeatMs: 30_000,
  resyncMs: 3_600_000,
  jitter: 0,
  maxBackoffMs: 120_000,
};

/** Writes `clusterId`'s feed record; `nudge` undefined: a writer from before nudges. */
function writeFeed(
  cm: FakeCloudMap,
  clusterId: string,
  r: { epoch?: string; seq: number; changes?: string[]; nudge?: string },
): void {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const svc = cm.serviceByName(ns.name, FEED_SERVICE) ?? cm.seedService(ns.name, FEED_SERVICE);
  const { instance } = encodeFeed({
    cluster: { clusterId, clustersetId: CLUSTERSET },
    epoch: r.epoch ?? 'e1',
    seq: r.seq,
    floor: 0,
    updatedAtMs: 1,
    changes: (r.changes ?? []).map((key) => {
      const [namespace = '', name = ''] = key.split('/');
      return { namespace, name, seq: r.seq };
    }),
    ...(r.nudge === undefined ? {} : { nudge: r.nudge }),
  });
  cm.seedInstance(svc.id, instance.id, instance.attributes);
}

function setup(opts: { c1Nudges?: boolean } = {}) {
  const cm = createFakeCloudMap();
  const clock = new FakeClock();
  const logger = createMemoryLogger();
  const changes: string[] = [];
  const feedChecks: number[] = [];
  const results: string[] = [];
  let missed = 0;
  const trusted: boolean[] = [];
  const port: CloudMapPort = {
    ...cm,
    listNamespaces: () => cm.listNamespaces(),
    listServices: (id) => cm.listServices(id),
    discoverInstances: (ns, name, q) => cm.discoverInstances(ns, name, q),
    discoverInstancesRevision: (ns, name) => {
      if (ns === FEED_NAMESPACE_NAME) feedChecks.push(clock.now());
      return cm.discoverInstancesRevision(ns, name);
    },
  };
  const poller = createPoller({
    port,
    clock,
    logger,
    clustersetId: CLUSTERSET,
    periods,
    random: () => 0,
    now: () => clock.now(),
    isLocalNamespace: () => true,
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: () => {},
    nudges: { nudgedFeedMs: 5_000, settleMs: 60_000, ownAddress: OWN, localClusterId: 'c2' },
    metrics: {
      nudge: (r) => results.push(r),
      nudgesMissed: (n) => (missed += n),
      nudgesTrusted: (t) => trusted.push(t),
    },
  });
  const tick = clockTicker(clock, 100, 6);
  const c1Nudge = opts.c1Nudges === false ? undefined : '-';
  /** c1 exports shop/a; c1 writes the feed (nudging unless told not to), c2 lists OWN. */
  const started = async (): Promise<void> => {
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(2, 1)));
    await heartbeat(cm, 'shop', 'c1', 1_000);
    writeFeed(cm, 'c1', { seq: 1, changes: ['shop/a'], ...(c1Nudge ? { nudge: c1Nudge } : {}) });
    writeFeed(cm, 'c2', { seq: 1, nudge: OWN });
    poller.start();
    await tick(0);
    changes.length = 0;
  };
  const checksIn = (from: number, to: number) =>
    feedChecks.filter((t) => t >= from && t < to).length;
  const nudge = (seq: number): Nudge => ({
    clustersetId: CLUSTERSET,
    clusterId: 'c1',
    epoch: 'e1',
    seq,
  });
  /** c1 changes shop/a (3 endpoints) and announces it at `seq` (its nudge is up to the test). */
  const c1Writes = async (seq: number): Promise<void> => {
    await publish(cm, exportOf('c1', 'shop', 'a', endpoints(3, 1)));
    writeFeed(cm, 'c1', { seq, changes: ['shop/a'], ...(c1Nudge ? { nudge: c1Nudge } : {}) });
  };
  return {
    cm,
    clock,
    logger,
    poller,
    changes,
    results,
    trusted,
    missed: () => missed,
    tick,
    started,
    checksIn,
    nudge,
    c1Writes,
  };
}

describe('poller with nudges', () => {
  it('polls the feed at the fast period until its address has been listed for the settle time, then at the nudged one', async () => {
    const t = setup();
    await t.started();
    await t.tick(59_000);
    expect(t.poller.nudgesTrusted).toBe(false);
    expect(t.checksIn(1, 59_000)).toBeGreaterThanOrEqual(57);
    await t.tick(2_000);
    expect(t.poller.nudgesTrusted).toBe(true);
    const from = t.clock.now();
    await t.tick(60_000);
    // 12 a minute instead of 60 at this test's 1 s fast period (50 at the 1.2 s default).
    expect(t.checksIn(from, from + 60_000)).toBeLessThanOrEqual(13);
    expect(t.checksIn(from, from + 60_000)).toBeGreaterThanOrEqual(11);
    expect(t.trusted).toEqual([false, true]);
    await t.poller.stop();
  });

  it('a nudge reads the change at once, between two slow rounds', async () => {
    const t = setup();
    await t.started();
    await t.tick(61_000);
    expect(t.poller.nudgesTrusted).toBe(true);
    // Right after a scheduled round: the next one is 5 s away.
    await t.tick(5_000 - (t.clock.now() % 5_000) + 50);
    await t.c1Writes(2);
    expect(t.poller.nudge(t.nudge(2))).toBe(true);
    await t.tick(100);
    expect(t.changes).toEqual(['shop/a']);
    expect(t.results).toEqual(['accepted']);
    await t.tick(10_000);
    expect(t.missed()).toBe(0);
    expect(t.poller.nudgesTrusted).toBe(true);
    await t.poller.stop();
  });

  it('retries while the feed does not show the nudged write yet, then gives up after 3 s', async () => {
    const t = setup();
    await t.started();
    await t.tick(61_000);
    await t.tick(5_000 - (t.clock.now() % 5_000) + 50);
    const from = t.clock.now();
    t.poller.nudge(t.nudge(7)); // a write the feed never shows (or a forged nudge)
    await t.tick(4_000);
    // The round at once and retries at 100, 200, 400, 800, 800 ... ms: bounded, not a spin.
    const checks = t.checksIn(from, from + 3_500);
    expect(checks).toBeGreaterThanOrEqual(4);
    expect(checks).toBeLessThanOrEqual(8);
    expect(t.results).toEqual(['accepted', 'unconfirmed']);
    await t.poller.stop();
  });

  it('a burst of nudges costs at most a round every 250 ms', async () => {
    const t = setup();
    await t.started();
    await t.tick(61_000);
    await t.tick(5_000 - (t.clock.now() % 5_000) + 50);
    await t.c1Writes(2);
    const from = t.clock.now();
    for (let i = 0; i < 100; i++) t.poller.nudge(t.nudge(2));
    await t.tick(1_000);
    expect(t.checksIn(from, from + 1_000)).toBeLessThanOrEqual(4);
    expect(t.changes).toEqual(['shop/a']);
    await t.poller.stop();
  });

  it('a settled writer that changes the feed without nudging is a miss: fast polling for 1 min, 2 after a second miss, one warning', async () => {
    const t = setup();
    await t.started();
    await t.tick(61_000);
    expect(t.poller.nudgesTrusted).toBe(true);
    await t.c1Writes(2); // no nudge
    await t.tick(5_000); // the next scheduled round reads it
    expect(t.changes).toEqual(['shop/a']);
    await t.tick(2_500);
    expect(t.missed()).toBe(1);
    expect(t.poller.nudgesTrusted).toBe(false);
    await t.c1Writes(3); // another miss: counted, not warned again
    await t.tick(5_000);
    expect(t.missed()).toBe(2);
    const from = t.clock.now();
    await t.tick(60_000);
    expect(t.checksIn(from, from + 60_000)).toBeGreaterThanOrEqual(58);
    const warnings = t.logger.entries.filter((e) => e.level === 'warn');
    expect(warnings.map((e) => e.message)).toEqual([
      expect.stringContaining('without nudging this agent'),
    ]);
    // The second miss came within 2 min of the first: it distrusts for 2 min, not 1.
    expect(t.poller.nudgesTrusted).toBe(false);
    await t.tick(65_000);
    expect(t.poller.nudgesTrusted).toBe(true);
    await t.poller.stop();
  });

  it('a writer that does not nudge (an older agent) keeps the fast period', async () => {
    const t = setup({ c1Nudges: false });
    await t.started();
    await t.tick(120_000);
    expect(t.poller.nudgesTrusted).toBe(false);
    expect(t.trusted).toEqual([false]);
    await t.poller.stop();
  });
});

describe('nudge trust', () => {
  const record = (clusterId: string, seq: number, nudge?: string, epoch = 'e1') => ({
    cluster: { clusterId, clustersetId: CLUSTERSET },
    epoch,
    seq,
    floor: 0,
    updatedAtMs: 0,
    changes: [],
    ...(nudge === undefined ? {} : { nudge }),
  });
  const n = (clusterId: string, seq: number, epoch = 'e1'): Nudge => ({
    clustersetId: CLUSTERSET,
    clusterId,
    epoch,
    seq,
  });

  it('needs its own address listed without a break for the settle time', () => {
    const trust = createNudgeTrust({ localClusterId: 'c2', ownAddress: OWN, settleMs: 60_000 });
    trust.observed([record('c1', 1, '-'), record('c2', 1, OWN)], 0);
    expect(trust.trusted(59_999)).toBe(false);
    expect(trust.trusted(60_000)).toBe(true);
    trust.observed([record('c1', 1, '-'), record('c2', 2, '-')], 61_000); // address gone
    expect(trust.trusted(61_000)).toBe(false);
    trust.observed([record('c1', 1, '-'), record('c2', 3, OWN)], 62_000);
    expect(trust.trusted(121_999)).toBe(false);
    expect(trust.trusted(122_000)).toBe(true);
  });

  it('never trusts without an address of its own', () => {
    const trust = createNudgeTrust({ localClusterId: 'c2', ownAddress: undefined, settleMs: 0 });
    trust.observed([record('c2', 1, '-')], 0);
    expect(trust.trusted(1e9)).toBe(false);
  });

  it('a write nudged before or within 2 s of the read that shows it is no miss; a new epoch expects nothing', () => {
    const trust = createNudgeTrust({ localClusterId: 'c2', ownAddress: OWN, settleMs: 0 });
    trust.observed([record('c1', 1, '-'), record('c2', 1, OWN)], 0);
    trust.nudged(n('c1', 2), 100);
    trust.observed([record('c1', 2, '-'), record('c2', 1, OWN)], 200);
    trust.observed([record('c1', 3, '-'), record('c2', 1, OWN)], 300);
    trust.nudged(n('c1', 3), 2_000);
    trust.observed([record('c1', 1, '-', 'e2'), record('c2', 1, OWN)], 2_100);
    expect(trust.expire(10_000)).toBe(0);
    expect(trust.trusted(10_000)).toBe(true);
    trust.observed([record('c1', 2, '-', 'e2'), record('c2', 1, OWN)], 10_000);
    expect(trust.expire(11_999)).toBe(0);
    expect(trust.expire(12_000)).toBe(1);
    expect(trust.trusted(12_000 + 59_999)).toBe(false);
    expect(trust.trusted(12_000 + 60_000)).toBe(true);
  });

  it('an isolated miss distrusts for 1 min; misses in a row double it up to 10 min', () => {
    const trust = createNudgeTrust({ localClusterId: 'c2', ownAddress: OWN, settleMs: 0 });
    let seq = 1;
    const missAt = (ms: number): void => {
      trust.observed([record('c1', ++seq, '-'), record('c2', 1, OWN)], ms - 2_000);
      expect(trust.expire(ms)).toBe(1);
    };
    trust.observed([record('c1', 1, '-'), record('c2', 1, OWN)], 0);
    expect(trust.penaltyMs()).toBe(0);
    const penalties: number[] = [];
    let at = 10_000;
    for (let i = 0; i < 6; i++) {
      missAt(at);
      penalties.push(trust.penaltyMs());
      at += 30_000; // each within twice the penalty of the one before
    }
    expect(penalties).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
    const last = at - 30_000;
    expect(trust.trusted(last + 599_999)).toBe(false);
    expect(trust.trusted(last + 600_000)).toBe(true);
    // A miss more than twice the last penalty later is isolated again.
    missAt(last + 1_200_001);
    expect(trust.penaltyMs()).toBe(60_000);
  });

  it('shows a nudge only when the last read has that writer at that epoch and number', () => {
    const trust = createNudgeTrust({ localClusterId: 'c2', ownAddress: OWN, settleMs: 0 });
    trust.observed([record('c1', 4, '-')], 0);
    expect(trust.shows(n('c1', 4))).toBe(true);
    expect(trust.shows(n('c1', 3))).toBe(true);
    expect(trust.shows(n('c1', 5))).toBe(false);
    expect(trust.shows(n('c1', 1, 'e9'))).toBe(false);
    expect(trust.shows(n('c3', 1))).toBe(false);
  });
});
