// Heartbeats must not trust the writer's clock or any instance (issue 31): importers judge a
// cluster live by when they saw its heartbeat renewal change on their own clock, and count a
// heartbeat instance only for the cluster its id names.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { encodeHeartbeat, HEARTBEAT_SERVICE_NAME } from '@cloudmap-mcs/core';
import type { ChaosAgent } from '../agent.js';
import { podIps } from '../kube.js';
import { heartbeatPeriodS } from '../profile.js';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch } from '../watch.js';
import { waitFor } from '../../wait.js';
import { evictionTimes } from './eviction.js';
import { CLUSTERSET } from './hostile.js';
import { change, convergeBoundMs, oneExport } from './setup.js';

const SKEW_MS = 90_000;
const FIVE_YEARS_MS = 5 * 365 * 86_400_000;
/** The test-only clock-shifting preload (e2e/src/chaos/clock-skew.ts), compiled next to us. */
const clockSkewModule = fileURLToPath(new URL('../clock-skew.js', import.meta.url));

/** Sum of the import agents' refusals of heartbeat instances (and other invalid instances). */
async function invalidInstanceRefusals(importers: readonly ChaosAgent[]): Promise<number> {
  let n = 0;
  for (const a of importers)
    n += await a.metric('mcs_import_refused_records_total', 'reason="invalid-instance"');
  return n;
}

export const exporterClockBehind: Scenario = {
  id: 'exporter-clock-behind',
  fault:
    "c1's export agent restarted with its clock 90 s behind (a test-only preload shifts Date) over its predecessor's heartbeat",
  expected:
    'no endpoint of c1 is lost anywhere over the TTL + 3 renewal periods after the restart; the skewed agent renews on its own schedule from its start; a change still imported within one fast poll period (plus the control latency)',
  async run(ctx, out) {
    const p = ctx.profile;
    const s = await oneExport(ctx);
    const c1 = ctx.cluster(0);
    const watch = new ImportWatch(ctx.clusters, s.ns, 250);
    await watch.start();
    // SIGTERM: the heartbeat it wrote with a correct clock stays in Cloud Map.
    await s.exporter.stop();
    const predecessorAt = await ctx.records.heartbeatMs(s.ns, c1.name);
    const skewed = ctx.agent('export', c1, {
      name: 'export-skewed',
      nodeArgs: [`--import=${clockSkewModule}`],
      env: { CHAOS_CLOCK_OFFSET_MS: String(-SKEW_MS) },
    });
    const startedAt = Date.now();
    await skewed.start();
    const first = await waitFor(
      'the skewed agent renews its heartbeat',
      async () => {
        const at = await ctx.records.heartbeatMs(s.ns, c1.name);
        return at !== undefined && at !== predecessorAt ? { at, seenAt: Date.now() } : undefined;
      },
      { timeoutMs: (p.import.ttlS + 3 * p.export.heartbeatS) * 1000, intervalMs: 250 },
    );
    // Past the point where its predecessor's last renewal would have expired, several periods.
    const holdMs = (p.import.ttlS + 3 * p.export.heartbeatS) * 1000;
    await sleep(Math.max(0, startedAt + holdMs - Date.now()));
    await watch.stop();
    const convergeMs = await change(
      ctx,
      s,
      podIps(1, 5),
      convergeBoundMs(ctx, s.controlMs) + 30_000,
    );
    const skewS = seconds(first.at - first.seenAt);
    out.figure('stored renewal vs real clock s', skewS);
    out.figure('first renewal after restart s', seconds(first.seenAt - startedAt));
    out.figure('watched s', seconds(holdMs));
    out.figure('endpoints lost', watch.lost);
    out.figure('samples below start', watch.samplesBelow);
    out.figure('change imported s', seconds(convergeMs));
    out.figure('control s', seconds(s.controlMs));
    out.observe(
      `the restarted agent wrote renewals ${Math.abs(skewS)} s behind the real clock, its first ${seconds(first.seenAt - startedAt)} s after its start; ${watch.lost} of ${watch.baseline} endpoints dropped over ${seconds(holdMs)} s${watch.firstLoss === '' ? '' : ` (first: ${watch.firstLoss})`}; a change imported in ${seconds(convergeMs)} s`,
    );
    out.check(
      first.at - first.seenAt < -(SKEW_MS - 10_000),
      `the agent's clock was not shifted (renewal ${skewS} s off the real clock)`,
    );
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped with the exporter's clock behind`);
    out.check(
      convergeMs <= convergeBoundMs(ctx, s.controlMs),
      `a change took ${seconds(convergeMs)} s (bound ${seconds(convergeBoundMs(ctx, s.controlMs))} s)`,
    );
  },
};

export const forgedFutureHeartbeat: Scenario = {
  id: 'forged-future-heartbeat',
  fault:
    "an extra heartbeat instance claiming c1 (another instance id) with a renewal time five years ahead; then c1's export agent is killed (kill -9)",
  expected:
    "the forged instance is refused (counted); c1's endpoints go from every import one TTL after its last real renewal (+ one heartbeat check period), not before",
  async run(ctx, out) {
    const p = ctx.profile;
    const s = await oneExport(ctx);
    const c1 = ctx.cluster(0).name;
    const before = await invalidInstanceRefusals(s.importers);
    const forged = encodeHeartbeat({
      cluster: { clusterId: c1, clustersetId: CLUSTERSET },
      renewedAtMs: Date.now() + FIVE_YEARS_MS,
      periodSeconds: p.export.heartbeatS,
    });
    await ctx.records.register(s.ns, HEARTBEAT_SERVICE_NAME, 'forged-heartbeat', forged.attributes);
    // Every import agent reads it (a heartbeat check or two) before the real one stops.
    const refused = await waitFor(
      'the forged heartbeat refused by every import agent',
      async () => {
        let all = true;
        for (const a of s.importers) if ((await invalidInstanceRefusals([a])) === 0) all = false;
        return all ? (await invalidInstanceRefusals(s.importers)) - before : undefined;
      },
      { timeoutMs: (4 * heartbeatPeriodS(p) + p.slackS) * 1000, intervalMs: 250 },
    );
    out.figure('refusals counted', refused);
    await evictionTimes(ctx, s, out, () => s.exporter.kill9());
  },
};
