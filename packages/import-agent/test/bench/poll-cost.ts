// Benchmark (prints figures, asserts nothing; docs/contributing.md#tests): Cloud Map calls per
// minute of the poller for N services, idle and with changes, and the planning time of one
// reconcile. Run: pnpm exec tsc --build packages/import-agent && node
// packages/import-agent/dist/test/bench/poll-cost.js
import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  mergeExports,
  noopLogger,
  planSlices,
  decodeServiceInstances,
  encodeClusterExport,
  trustExport,
  createAddressPolicy,
} from '@cloudmap-mcs/core';
import { createFakeCloudMap, FakeClock, type FakeCloudMap } from '@cloudmap-mcs/core/testing';
import { parseAgentConfig } from '@cloudmap-mcs/core/agent';
import { importConfigSpec, pollPeriodsOf } from '../../src/config.js';
import { createPoller } from '../../src/poller/poller.js';
import {
  CLUSTERSET,
  endpoints,
  exportOf,
  heartbeat,
  publish,
  settle,
} from '../cloudmap-fixtures.js';

/** The production defaults (the flags' defaults), without jitter so runs repeat exactly. */
const config = await parseAgentConfig(importConfigSpec, [], {}, 'bench');
const defaults = pollPeriodsOf(config);
const feedPeriods = { ...defaults, jitter: 0 };
/** Without the change feed: every service's revision every fast period (`--poll-feed-seconds 0`). */
const perServicePeriods = { ...feedPeriods, feedMs: 0 };
/** The fake clock's step: fine enough for the 1.2 s feed period to count as itself. */
const STEP_MS = 100;

/** c1's feed instance as its export agent writes it: `changed` lists (name, seq), newest first. */
function writeFeed(cm: FakeCloudMap, seq: number, changed: [string, number][]): void {
  const ns = cm.namespaceByName(FEED_NAMESPACE_NAME) ?? cm.seedNamespace(FEED_NAMESPACE_NAME);
  const name = feedServiceName(CLUSTERSET);
  const svc = cm.serviceByName(ns.name, name) ?? cm.seedService(ns.name, name);
  const { instance } = encodeFeed({
    cluster: { clusterId: 'c1', clustersetId: CLUSTERSET },
    epoch: 'bench',
    seq,
    floor: 0, // the codec raises it past what does not fit
    updatedAtMs: 1,
    changes: changed.map(([n, at]) => ({ namespace: 'shop', name: n, seq: at })),
  });
  cm.seedInstance(svc.id, instance.id, instance.attributes);
}

async function pollCost(
  services: number,
  changesPerMinute: number,
  budget: number | undefined,
  feed: boolean,
): Promise<Record<string, number>> {
  const cm = createFakeCloudMap();
  for (let i = 0; i < services; i++)
    await publish(cm, exportOf('c1', 'shop', `svc-${String(i)}`, endpoints(3, 1)));
  await heartbeat(cm, 'shop', 'c1', 1);
  let seq = 0;
  let recent: [string, number][] = [];
  if (feed) writeFeed(cm, seq, recent);
  const periods = feed ? feedPeriods : perServicePeriods;
  const clock = new FakeClock();
  const poller = createPoller({
    port: cm,
    clock,
    // Feed slots are wall-clock multiples of the period: the fake clock is the wall clock here.
    now: () => clock.now(),
    logger: noopLogger,
    clustersetId: CLUSTERSET,
    periods,
    random: () => 0,
    ...(budget === undefined ? {} : { requestBudgetPerSecond: budget }),
    isLocalNamespace: () => true,
    onServiceChange: () => {},
    onHeartbeatChange: () => {},
  });
  poller.start();
  clock.advance(0);
  await settle(50);
  // Warm up one slow period, then measure ten minutes.
  const step = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += STEP_MS) {
      clock.advance(STEP_MS);
      await settle(8);
    }
  };
  await step(60_000);
  cm.resetCounters();
  const minutes = 10;
  for (let m = 0; m < minutes; m++) {
    for (let c = 0; c < changesPerMinute; c++) {
      await publish(
        cm,
        exportOf('c1', 'shop', `svc-${String(c % services)}`, endpoints(3 + ((m + c) % 2), 1)),
      );
      if (feed) {
        const name = `svc-${String(c % services)}`;
        recent = [[name, ++seq] as [string, number], ...recent.filter(([n]) => n !== name)];
        writeFeed(cm, seq, recent);
      }
    }
    await step(60_000);
  }
  await poller.stop();
  const snapshot = cm.snapshot();
  // Writes above are the test's own publishing; report the poller's reads only.
  const reads = [
    'listNamespaces',
    'listServices',
    'discoverInstancesRevision',
    'discoverInstances',
  ] as const;
  return Object.fromEntries(
    reads.map((op) => [op, Math.round(((snapshot[op] ?? 0) / minutes) * 10) / 10]),
  );
}

function planningTime(
  n: number,
  clusters: number,
): { mergeAndTrustMs: number; slicesMs: number; unchangedMs: number } {
  const policy = { clustersetId: CLUSTERSET, addresses: createAddressPolicy([]) };
  const instances = Array.from(
    { length: clusters },
    (_, c) =>
      encodeClusterExport(
        exportOf(`c${String(c + 1)}`, 'shop', 'big', endpoints(n / clusters, c + 1)),
      ).instances,
  ).flat();
  const runs = 20;
  let t = performance.now();
  let merged;
  for (let r = 0; r < runs; r++) {
    const decoded = decodeServiceInstances('shop', 'big', instances, { clustersetId: CLUSTERSET });
    merged = mergeExports(decoded.exports.flatMap((e) => trustExport(policy, e).value ?? []));
  }
  const mergeAndTrustMs = (performance.now() - t) / runs;
  const input = {
    namespace: 'shop',
    importName: 'big',
    derivedName: 'derived-x',
    managedBy: 'x',
    sources: merged?.sources ?? [],
  };
  t = performance.now();
  let plan = planSlices({ ...input, observed: [] });
  for (let r = 1; r < runs; r++) plan = planSlices({ ...input, observed: [] });
  const slicesMs = (performance.now() - t) / runs;
  t = performance.now();
  for (let r = 0; r < runs; r++) planSlices({ ...input, observed: plan.desired });
  const unchangedMs = (performance.now() - t) / runs;
  return {
    mergeAndTrustMs: +mergeAndTrustMs.toFixed(2),
    slicesMs: +slicesMs.toFixed(2),
    unchangedMs: +unchangedMs.toFixed(2),
  };
}

const rows: string[] = [];
for (const [services, changes, budget, feed] of [
  [10, 0, undefined, false],
  [100, 0, undefined, false],
  [1000, 0, undefined, false],
  [1000, 0, 100, false],
  [10, 0, undefined, true],
  [10, 5, undefined, true],
  [100, 0, undefined, true],
  [100, 20, undefined, true],
  [1000, 0, undefined, true],
  [1000, 20, undefined, true],
] as const) {
  const cost = await pollCost(services, changes, budget, feed);
  const total = Object.values(cost).reduce((a, b) => a + b, 0);
  rows.push(
    `${feed ? 'feed    ' : 'no feed '} services=${String(services).padStart(4)} changes/min=${String(changes).padStart(2)} budget=${String(budget ?? '-').padStart(3)}/s  calls/min=${total.toFixed(1).padStart(7)}  ${JSON.stringify(cost)}`,
  );
}
console.log(
  `Poll cost, 10-minute average, the defaults (feed ${String((feedPeriods.feedMs ?? 0) / 1000)} s, heartbeats ${String((feedPeriods.heartbeatMs ?? 0) / 1000)} s, listing ${String(feedPeriods.slowMs / 1000)} s, background budget ${String((feedPeriods.resyncBudgetPerMinute ?? 0) + (feedPeriods.listingBudgetPerMinute ?? 0))}/min; no feed: every service every ${String(feedPeriods.fastMs / 1000)} s):`,
);
for (const r of rows) console.log(`  ${r}`);
console.log(
  'Planning time per reconcile (decode + trust + merge; slice plan from scratch; slice plan unchanged):',
);
for (const [n, clusters] of [
  [1000, 1],
  [1000, 2],
  [250, 1],
] as const) {
  console.log(
    `  endpoints=${String(n)} clusters=${String(clusters)}  ${JSON.stringify(planningTime(n, clusters))}`,
  );
}
