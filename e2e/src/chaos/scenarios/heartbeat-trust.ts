// Heartbeats must not trust the writer's clock or any instance (issue 31): importers judge a
// cluster live by when they saw its heartbeat renewal change on their own clock, and count a
// heartbeat instance only for the cluster its id names.
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { encodeHeartbeat, HEARTBEAT_SERVICE_NAME } from '@cloudmap-mcs/core';
import type { ChaosAgent } from '../agent.js';
import { podIps } from '../kube.js';
import { heartbeatPeriodS } from '../profile.js';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch } from '../watch.js';
import { repoRoot } from '../../paths.js';
import { waitFor } from '../../wait.js';
import { evictionTimes } from './eviction.js';
import { CLUSTERSET } from './hostile.js';
import { change, convergeBoundMs, oneExport } from './setup.js';

const SKEW_MS = 90_000;
const FIVE_YEARS_MS = 5 * 365 * 86_400_000;
/** The test-only clock-shifting preload (e2e/src/chaos/clock-skew.ts), compiled next to us. */
// The compiled preload, also when this scenario runs from source under vitest (the agent is a
// plain node process: it cannot load the .ts file next to this one).
const clockSkewModule = join(repoRoot(), 'e2e', 'dist', 'src', 'chaos', 'clock-skew.js');

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
    // Held past the point where its predecessor's last renewal would have expired, several
    // periods; the stored renewal sampled meanwhile (it changes with each renewal).
    const holdMs = (p.import.ttlS + 3 * p.export.heartbeatS) * 1000;
    let first: { at: number; seenAt: number } | undefined;
    let last = predecessorAt;
    let lastChangeAt = predecessorAt ?? startedAt;
    let maxGapMs = 0;
    while (Date.now() < startedAt + holdMs) {
      const at = await ctx.records.heartbeatMs(s.ns, c1.name).catch(() => undefined);
      const now = Date.now();
      if (at !== undefined && at !== last) {
        first ??= { at, seenAt: now };
        maxGapMs = Math.max(maxGapMs, now - lastChangeAt);
        lastChangeAt = now;
        last = at;
      }
      await sleep(250);
    }
    maxGapMs = Math.max(maxGapMs, Date.now() - lastChangeAt);
    await watch.stop();
    const bound = convergeBoundMs(ctx, s.controlMs);
    const convergeMs = await change(ctx, s, podIps(1, 5), bound + 30_000).catch(() => undefined);
    const skewS = first === undefined ? undefined : seconds(first.at - first.seenAt);
    out.figure('stored renewal vs real clock s', skewS ?? 'no renewal');
    if (first !== undefined)
      out.figure('first renewal after restart s', seconds(first.seenAt - startedAt));
    out.figure('longest gap between renewals s', seconds(maxGapMs));
    out.figure('watched s', seconds(holdMs));
    out.figure('endpoints lost', watch.lost);
    out.figure('samples below start', watch.samplesBelow);
    out.figure('change imported s', convergeMs === undefined ? 'never' : seconds(convergeMs));
    out.figure('control s', seconds(s.controlMs));
    out.observe(
      `${first === undefined ? 'the restarted agent wrote no renewal' : `the restarted agent wrote renewals ${Math.abs(skewS ?? 0)} s behind the real clock, its first ${seconds(first.seenAt - startedAt)} s after its start`}; the stored renewal went at most ${seconds(maxGapMs)} s without changing; ${watch.lost} of ${watch.baseline} endpoints dropped over ${seconds(holdMs)} s${watch.firstLoss === '' ? '' : ` (first: ${watch.firstLoss})`}; a change imported ${convergeMs === undefined ? 'never' : `in ${seconds(convergeMs)} s`}`,
    );
    out.check(first !== undefined, 'the restarted agent never renewed its heartbeat');
    out.check(
      first === undefined || first.at - first.seenAt < -(SKEW_MS - 10_000),
      `the agent's clock was not shifted (renewal ${skewS ?? '?'} s off the real clock)`,
    );
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped with the exporter's clock behind`);
    out.check(
      convergeMs !== undefined && convergeMs <= bound,
      `a change took ${convergeMs === undefined ? 'forever' : `${seconds(convergeMs)} s`} (bound ${seconds(bound)} s)`,
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
    const refusing = async () => {
      let n = 0;
      for (const a of s.importers) if ((await invalidInstanceRefusals([a])) > 0) n += 1;
      return n;
    };
    await waitFor(
      'the forged heartbeat refused by every import agent',
      async () => ((await refusing()) === s.importers.length ? true : undefined),
      { timeoutMs: (4 * heartbeatPeriodS(p) + p.slackS) * 1000, intervalMs: 250 },
    ).catch(() => undefined);
    const refused = (await invalidInstanceRefusals(s.importers)) - before;
    out.check(
      (await refusing()) === s.importers.length,
      'the forged heartbeat instance was not refused by every import agent',
    );
    out.figure('refusals counted', refused);
    await evictionTimes(ctx, s, out, () => s.exporter.kill9());
  },
};
