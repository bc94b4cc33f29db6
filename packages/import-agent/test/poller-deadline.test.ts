import { cloudMapOperations, noopLogger, type CloudMapPort } from '@cloudmap-mcs/core';
import { createCloudMapClient } from '@cloudmap-mcs/core/cloudmap';
import { createFakeCloudMap, FakeClock, unlimited } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../src/poller/poller.js';
import type { SnapshotHealth } from '../src/poller/snapshot.js';
import { CLUSTERSET, clockTicker, endpoints, exportOf, publish } from './cloudmap-fixtures.js';

/**
 * The fake Cloud Map behind a switch: while `hole` is on, every call is swallowed (never
 * answered, never failed), as by a proxy that holds connections open. Calls swallowed stay
 * unanswered after the heal, like the connections a black hole took.
 */
function blackHoled() {
  const cm = createFakeCloudMap();
  const sw = { hole: false, swallowed: 0 };
  const port = {} as Record<string, unknown>;
  for (const op of cloudMapOperations)
    port[op] = (...args: unknown[]) => {
      if (!sw.hole) return (cm[op] as (...a: unknown[]) => Promise<unknown>).apply(cm, args);
      sw.swallowed += 1;
      return new Promise(() => undefined);
    };
  return { cm, sw, port: port as unknown as CloudMapPort };
}

function setup(services: number) {
  const { cm, sw, port } = blackHoled();
  const clock = new FakeClock();
  // The agents' client: every call ends within its 10 s deadline (on this clock).
  const client = createCloudMapClient(port, { clock, limiter: unlimited, random: () => 0.5 });
  const health: { atMs: number; h: SnapshotHealth }[] = [];
  const changes: string[] = [];
  const poller = createPoller({
    port: client,
    clock,
    logger: noopLogger,
    clustersetId: CLUSTERSET,
    periods: { slowMs: 60_000, fastMs: 5_000, resyncMs: 600_000, jitter: 0, maxBackoffMs: 120_000 },
    random: () => 0,
    now: () => clock.now(),
    isLocalNamespace: () => true,
    onServiceChange: (ns, name) => changes.push(`${ns}/${name}`),
    onHeartbeatChange: () => undefined,
    onHealthChange: (h) => health.push({ atMs: clock.now(), h }),
  });
  const publishAll = async () => {
    for (let i = 0; i < services; i++)
      await publish(cm, exportOf('c1', 'shop', `s${String(i)}`, endpoints(1, 1)));
  };
  return {
    cm,
    sw,
    clock,
    client,
    poller,
    health,
    changes,
    tick: clockTicker(clock, 500, 4),
    publishAll,
  };
}

describe('poller: calls that are never answered', () => {
  it('reports Cloud Map unreachable within one call deadline, however many calls a round makes, and recovers on the heal', async () => {
    // 40 services: a fast round checks each (8 at a time); without a deadline and the
    // per-call verdict this round would hang for good (40 / 8 × 10 s even with deadlines).
    const { cm, sw, clock, client, poller, health, changes, tick, publishAll } = setup(40);
    await publishAll();
    poller.start();
    await tick(0);
    expect(poller.synced).toBe(true);
    expect(poller.health().reachable).toBe(true);

    sw.hole = true;
    const cutAt = clock.now();
    await tick(15_000);
    const down = health.find((e) => !e.h.reachable);
    expect(down?.atMs).toBeDefined();
    // The first fast round after the cut (≤ 5 s) plus one 10 s deadline.
    expect((down?.atMs ?? Infinity) - cutAt).toBeLessThanOrEqual(15_000);
    expect(poller.health().message).toMatch(/Cloud Map unreachable/);
    // While unreachable, reads wait for the probe instead of each taking a deadline.
    const swallowedBlind = sw.swallowed;
    await tick(20_000);
    expect(sw.swallowed - swallowedBlind).toBeLessThanOrEqual(5); // a probe per period

    // The heal: what was swallowed stays unanswered, but the next probe gets through.
    sw.hole = false;
    await publish(cm, exportOf('c1', 'shop', 's3', endpoints(2, 1)));
    changes.length = 0;
    const healedAt = clock.now();
    await tick(6_000);
    expect(poller.health().reachable).toBe(true);
    const up = health.findLast((e) => e.h.reachable);
    expect((up?.atMs ?? Infinity) - healedAt).toBeLessThanOrEqual(5_000);
    // Recovery runs a listing and the fast round checks every service again.
    await tick(5_000);
    expect(changes).toContain('shop/s3');
    await poller.stop();
    await client.close();
  });
});
