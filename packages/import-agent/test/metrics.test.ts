import { CloudMapError, noopLogger, type CloudMapPort } from '@cloudmap-mcs/core';
import { createFakeCloudMap, FakeClock } from '@cloudmap-mcs/core/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createImportMetrics } from '../src/metrics.js';
import { createPoller } from '../src/poller/poller.js';
import { CLUSTERSET, clockTicker, endpoints, exportOf, publish } from './cloudmap-fixtures.js';

const WALL = 1_700_000_000_000;

/** A poller on the fake Cloud Map reporting into the agent's metrics, on fake time. */
async function setup() {
  const cm = createFakeCloudMap();
  for (const ns of ['shop', 'web', 'other'])
    await publish(cm, exportOf('c1', ns, 'cart', endpoints(2, 1)));
  const webId = cm.namespaceByName('web')?.id;
  const failing = { web: false };
  // ListServices of "web" fails while asked: one namespace this agent cannot read.
  const port: CloudMapPort = Object.assign(Object.create(cm) as CloudMapPort, {
    listServices: (id: string) =>
      failing.web && id === webId
        ? Promise.reject(new CloudMapError('AccessDeniedException', 'denied', 'ListServices'))
        : cm.listServices(id),
  });
  const clock = new FakeClock();
  const registry = new Registry();
  const leaderRegistry = new Registry();
  const metrics = createImportMetrics(registry, leaderRegistry);
  const local = new Set(['shop', 'web']);
  const poller = createPoller({
    port,
    clock,
    logger: noopLogger,
    clustersetId: CLUSTERSET,
    periods: { slowMs: 60_000, fastMs: 5_000, resyncMs: 600_000, jitter: 0, maxBackoffMs: 60_000 },
    random: () => 0,
    now: () => WALL + clock.now(),
    isLocalNamespace: (n) => local.has(n),
    onServiceChange: () => {},
    onHeartbeatChange: () => {},
    onHealthChange: (h, synced) => metrics.health?.(h, synced),
    metrics,
  });
  const lastGood = async () => {
    const out: Record<string, number> = {};
    for (const line of (await leaderRegistry.metrics()).split('\n')) {
      const m =
        /^mcs_import_cloudmap_last_good_timestamp_seconds\{cloudmap_namespace="([^"]+)"\} (\S+)$/.exec(
          line,
        );
      if (m?.[1] !== undefined) out[m[1]] = (WALL + clock.now()) / 1000 - Number(m[2]);
    }
    return out; // age in seconds per namespace
  };
  return {
    cm,
    clock,
    poller,
    registry,
    leaderRegistry,
    lastGood,
    failing,
    local,
    tick: clockTicker(clock, 1_000, 4),
  };
}

describe('import agent metrics', () => {
  it('report the age of the last good read per namespace it imports from, and only those', async () => {
    const { poller, lastGood, failing, local, tick } = await setup();
    poller.start();
    await tick(0);
    expect(await lastGood()).toEqual({ shop: 0, web: 0 }); // "other" is not local
    // Healthy and idle: each listing (every 60 s) renews both.
    await tick(150_000);
    expect(Math.max(...Object.values(await lastGood()))).toBeLessThanOrEqual(60);
    // One namespace cannot be listed: only its age grows.
    failing.web = true;
    await tick(360_000);
    const ages = await lastGood();
    expect(ages['shop']).toBeLessThanOrEqual(60);
    expect(ages['web']).toBeGreaterThan(300);
    failing.web = false;
    await tick(120_000);
    expect(Math.max(...Object.values(await lastGood()))).toBeLessThanOrEqual(60);
    // A namespace no longer imported from leaves no series behind.
    local.delete('web');
    await tick(60_000);
    expect(Object.keys(await lastGood())).toEqual(['shop']);
    await poller.stop();
  });

  it('keep data gauges in the leader registry, counters in the one always served', async () => {
    const { poller, registry, leaderRegistry, tick } = await setup();
    // Before the first poll round: no reachability to report, not a 0.
    expect(await leaderRegistry.metrics()).not.toContain('mcs_import_cloudmap_reachable');
    poller.start();
    await tick(0);
    const leader = await leaderRegistry.metrics();
    expect(leader).toContain('\nmcs_import_cloudmap_reachable 1\n');
    expect(leader).toContain('\nmcs_import_cloudmap_synced 1\n');
    expect(leader).toContain('\nmcs_import_cloudmap_failing_services 0\n');
    const always = await registry.metrics();
    expect(always).toContain('mcs_import_poll_rounds_total{kind="slow",outcome="success"} 1');
    for (const gauge of ['reachable', 'synced', 'last_good', 'failing', 'stale', 'collisions'])
      expect(always).not.toMatch(new RegExp(`mcs_import_[a-z_]*${gauge}`));
    await poller.stop();
  });
});
