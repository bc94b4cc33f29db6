// The change feed is an accelerator, never a source of truth (issue 31, ADR 0018): a writer's
// services skip their own revision checks only while its heartbeat vouches for its feed
// record. Each scenario leaves or forges a feed record that does not tell the truth and makes
// a same-count endpoint change in c1 (one address replaced, so nothing but the record's
// contents differs), which c2 must still import within the bound.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Attr,
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedInstanceId,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  MAX_FEED_SEQ,
  type CloudMapInstance,
  type FeedEntry,
} from '@cloudmap-mcs/core';
import type { ChaosAgent } from '../agent.js';
import type { ChaosContext } from '../context.js';
import { podIps, setEndpoints } from '../kube.js';
import { fastPeriodS, heartbeatPeriodS } from '../profile.js';
import { seconds, type Outcome, type Scenario } from '../scenario.js';
import { waitImported } from '../watch.js';
import { waitFor } from '../../wait.js';
import { CLUSTERSET } from './hostile.js';
import { oneExport, type OneExport } from './setup.js';

/** The issue's bound for a change behind a frozen or forged feed record. */
const HIDDEN_CHANGE_BOUND_MS = 10_000;
/** The issue's bound for a real change while a forged feed floods the readers. */
const FLOOD_CHANGE_BOUND_MS = 3_000;
/** DiscoverInstances a second one import agent may make while the feed is flooded. */
const FLOOD_READS_PER_S = 10;
const UNVOUCHED_LOG = 'change feed record not vouched for by its heartbeat';
const UNVOUCHED_METRIC = 'mcs_import_feed_unvouched_rounds_total';

const feedService = feedServiceName(CLUSTERSET);

/** c1's feed instance as stored in Cloud Map, if any. */
async function feedRecordOf(ctx: ChaosContext, clusterId: string) {
  const id = feedInstanceId({ clusterId, clustersetId: CLUSTERSET });
  return (await ctx.records.instances(FEED_NAMESPACE_NAME, feedService)).find((i) => i.id === id);
}

/**
 * Waits until c1's feed record exists and c1's heartbeat in `ns` states its epoch, then until
 * the import agents have read that heartbeat (one heartbeat check period) and checked c1's
 * services since (one fast poll period): from then on they skip those services' own revision
 * checks, which is what a record that does not tell the truth could exploit. Returns the
 * record as it is then.
 */
async function vouchedFeed(ctx: ChaosContext, ns: string): Promise<CloudMapInstance> {
  const c1 = ctx.cluster(0).name;
  let record: CloudMapInstance | undefined;
  await waitFor(
    `${c1}'s feed record and a heartbeat vouching for it`,
    async () => {
      record = await feedRecordOf(ctx, c1);
      const hb = (await ctx.records.instances(ns, HEARTBEAT_SERVICE_NAME)).find(
        (i) => i.attributes[Attr.ClusterId] === c1,
      );
      const epoch = record?.attributes[Attr.FeedEpoch];
      return epoch !== undefined && hb?.attributes[Attr.FeedEpoch] === epoch;
    },
    { timeoutMs: ctx.profile.setupTimeoutS * 1000, intervalMs: 500 },
  );
  if (record === undefined) throw new Error('no feed record');
  // And one listing: a listing that finds a service's instance count moved since the last one
  // checks it (the setup's control change added an endpoint), which would show a change made
  // now without any help from the feed.
  const p = ctx.profile;
  const slowPeriodS = p.import.slowPollS * (1 + p.import.jitter);
  await sleep((Math.max(heartbeatPeriodS(p) + fastPeriodS(p), slowPeriodS) + 2) * 1000);
  // The record as it is now: the writer names a service again when its writes complete, so
  // the one read above may be older (putting an older one back would make readers read).
  const now = await feedRecordOf(ctx, c1);
  if (now === undefined || now.attributes[Attr.FeedEpoch] !== record.attributes[Attr.FeedEpoch])
    throw new Error(`${c1}'s feed record changed epoch or went while nothing happened`);
  return now;
}

/** The exported addresses with the last one replaced: the same count, one new IP. */
function replaceOne(ips: readonly string[], k: number): string[] {
  return [...ips.slice(0, -1), podIps(1, 1, 100 + k)[0] ?? '10.1.100.200'];
}

/**
 * Makes a same-count change in c1 and times its import in c2 (the cluster that relies on
 * c1's feed); waits up to `waitMs` so a miss is measured, not cut off at the bound.
 */
async function hiddenChange(
  ctx: ChaosContext,
  s: OneExport,
  k: number,
  waitMs: number,
): Promise<number | undefined> {
  const ips = replaceOne(s.ips, k);
  const started = Date.now();
  await setEndpoints(ctx.cluster(0), s.ns, s.service, ips);
  s.ips = ips;
  try {
    await waitImported([ctx.cluster(1)], s.ns, s.service, ctx.cluster(0).name, ips, waitMs);
    return Date.now() - started;
  } catch {
    return undefined;
  }
}

function checkBound(
  out: Outcome,
  name: string,
  ms: number | undefined,
  boundMs: number,
  waitMs: number,
): void {
  out.figure(name, ms === undefined ? `not after ${seconds(waitMs)}` : seconds(ms));
  out.check(
    ms !== undefined && ms <= boundMs,
    ms === undefined
      ? `the change was not in c2 after ${seconds(waitMs)} s (bound ${seconds(boundMs)} s)`
      : `the change took ${seconds(ms)} s to reach c2 (bound ${seconds(boundMs)} s)`,
  );
}

/** Rounds an import agent counted a writer's record as not vouched for (every reason: none given). */
const unvouchedRounds = (a: ChaosAgent, reason?: string): Promise<number> =>
  a.metric(UNVOUCHED_METRIC, reason === undefined ? '' : `reason="${reason}"`);

export const staleFeed: Scenario = {
  id: 'stale-feed',
  fault:
    "c1's export agent restarted with --change-feed=false: its last feed record stays in Cloud Map; then one of c1's endpoint addresses replaced (same count)",
  expected: `the change imported in c2 within ${seconds(HIDDEN_CHANGE_BOUND_MS)} s (c1's heartbeat no longer vouches for the record: its services are checked one by one)`,
  async run(ctx, out) {
    const s = await oneExport(ctx);
    const c1 = ctx.cluster(0).name;
    const before = await vouchedFeed(ctx, s.ns);
    const [, importer2] = s.importers;
    if (importer2 === undefined) throw new Error('the scenario needs 2 clusters');
    // When c2's agent stops trusting the record: its count rises past what it was before the
    // restart (an agent also counts a moment at its own start, before it read any heartbeat).
    const atStop = await unvouchedRounds(importer2);
    const stoppedAt = Date.now();
    let distrustAt: number | undefined;
    let watching = true;
    const watcher = (async () => {
      while (watching && distrustAt === undefined) {
        if ((await unvouchedRounds(importer2)) > atStop) distrustAt = Date.now();
        await sleep(250);
      }
    })();
    let ms: number | undefined;
    const waitMs = 6 * HIDDEN_CHANGE_BOUND_MS;
    let changedAt = 0;
    let removed = false;
    try {
      await s.exporter.stop();
      const quiet = ctx.agent('export', ctx.cluster(0), {
        name: 'export-c1-nofeed',
        args: ['--change-feed=false'],
      });
      await quiet.start();
      // A feed-off agent removes the record its earlier run left, at its first heartbeat
      // (ADR 0018 decision 12). The scenario is about a record nobody writes any more that
      // stays anyway (a replayed copy, or a removal that failed): wait up to 10 s for the
      // removal, then put the old record back either way.
      removed = false;
      for (const until = Date.now() + 10_000; !removed && Date.now() < until; await sleep(250))
        removed = (await feedRecordOf(ctx, c1)) === undefined;
      await ctx.records.register(FEED_NAMESPACE_NAME, feedService, before.id, before.attributes);
      out.observe(
        removed
          ? 'the restarted agent removed its old feed record; the test put it back'
          : `c1's old feed record (seq ${before.attributes[Attr.FeedSeq] ?? '?'}) stayed after the restart; the test wrote it again`,
      );
      changedAt = Date.now();
      ms = await hiddenChange(ctx, s, 1, waitMs);
      // Distrust must come whatever made the change visible: the restarted agent's heartbeat,
      // which states no feed, is read within one heartbeat period (30 s). When the agent had
      // removed its record, the record's return made c1 a new writer, whose services are
      // checked once first, so the change can arrive before the distrust it then does not need.
      for (const until = stoppedAt + 45_000; distrustAt === undefined && Date.now() < until;)
        await sleep(250);
    } finally {
      watching = false;
      await watcher;
    }
    const unvouched = await unvouchedRounds(importer2, 'no-heartbeat');
    const logged = importer2.logLines(UNVOUCHED_LOG);
    const distrustMs = distrustAt === undefined ? undefined : distrustAt - stoppedAt;
    out.figure('control s', seconds(s.controlMs));
    checkBound(out, 'change in c2 s', ms, HIDDEN_CHANGE_BOUND_MS, waitMs);
    out.figure(
      'record distrusted after restart s',
      distrustMs === undefined ? 'not seen' : seconds(distrustMs),
    );
    out.figure('c2 unvouched rounds (no-heartbeat)', unvouched);
    out.observe(
      `a change made right after the restart reached c2 in ${ms === undefined ? `more than ${seconds(waitMs)}` : seconds(ms)} s; c2's import agent stopped trusting c1's record ${distrustMs === undefined ? 'never' : `${seconds(distrustMs)} s after the old agent stopped`} and counted ${unvouched} rounds with c1's record not vouched for (no-heartbeat), logged ${logged} times`,
    );
    out.check(
      distrustAt !== undefined,
      "c2's import agent never counted c1's record as not vouched for",
    );
    // While the feed covers c1's service, nothing but distrust lets c2 see the change: one seen
    // earlier means the service was not covered and the scenario tested no hidden change. Not
    // when the restarted agent removed its record first: c2 then saw c1's feed writer gone and
    // back (a new writer, whose services are checked once before the feed covers them), which
    // finds the change by design before any distrust is needed.
    out.check(
      removed || ms === undefined || distrustAt === undefined || distrustAt <= changedAt + ms + 500,
      "the change reached c2 before c2's import agent stopped trusting c1's record: c1's service was not covered by the feed, so no hidden change was tested",
    );
  },
};

export const forgedFeedSeq: Scenario = {
  id: 'forged-feed-seq',
  fault: `c1's feed record re-registered by a hostile writer with its epoch and FEED_SEQ=${String(MAX_FEED_SEQ)} (put back whenever c1's agent overwrites it); then one of c1's endpoint addresses replaced (same count)`,
  expected: `the change imported in c2 within ${seconds(HIDDEN_CHANGE_BOUND_MS)} s; c2's import agent says the record is not vouched for (seq-ahead)`,
  async run(ctx, out) {
    const s = await oneExport(ctx);
    const c1 = ctx.cluster(0).name;
    const honest = await vouchedFeed(ctx, s.ns);
    // The same epoch, the floor the writer wrote (so every entry still lies in (floor, seq]).
    const forged = { ...honest.attributes, [Attr.FeedSeq]: String(MAX_FEED_SEQ) };
    let forges = 0;
    const forge = async (): Promise<void> => {
      await ctx.records.register(FEED_NAMESPACE_NAME, feedService, honest.id, forged);
      forges++;
    };
    const forgedAt = Date.now();
    await forge();
    let forging = true;
    const keeper = (async () => {
      while (forging) {
        const now = await feedRecordOf(ctx, c1).catch(() => undefined);
        if (forging && now?.attributes[Attr.FeedSeq] !== String(MAX_FEED_SEQ))
          await forge().catch(() => undefined);
        await sleep(200);
      }
    })();
    try {
      const [, importer2] = s.importers;
      if (importer2 === undefined) throw new Error('the scenario needs 2 clusters');
      await waitFor(
        "c2's import agent to see the forged record",
        async () => (await unvouchedRounds(importer2, 'seq-ahead')) > 0,
        { timeoutMs: 60_000, intervalMs: 250 },
      ).catch(() => undefined);
      const seenMs = Date.now() - forgedAt;
      const waitMs = 6 * HIDDEN_CHANGE_BOUND_MS;
      const ms = await hiddenChange(ctx, s, 1, waitMs);
      const unvouched = await unvouchedRounds(importer2, 'seq-ahead');
      const logged = importer2
        .log()
        .split('\n')
        .filter((l) => l.includes(UNVOUCHED_LOG) && l.includes('seq-ahead')).length;
      out.figure('control s', seconds(s.controlMs));
      out.figure('forged seen s', seconds(seenMs));
      checkBound(out, 'change in c2 s', ms, HIDDEN_CHANGE_BOUND_MS, waitMs);
      out.figure('c2 unvouched rounds (seq-ahead)', unvouched);
      out.figure('forged writes', forges);
      out.observe(
        `c2's import agent counted the forged record as not vouched for (seq-ahead) ${seconds(seenMs)} s after it was written (${unvouched} rounds, ${logged} log lines); the change reached c2 in ${ms === undefined ? `more than ${seconds(waitMs)}` : seconds(ms)} s; the record was forged ${forges} times (put back after c1's agent rewrote it)`,
      );
      out.check(
        unvouched > 0 && logged > 0,
        `c2's import agent did not say the forged record is not vouched for (${unvouched} rounds counted, ${logged} log lines)`,
      );
    } finally {
      forging = false;
      await keeper;
    }
  },
};

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), 1-based: utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

const discoverCalls = (a: ChaosAgent): Promise<number> =>
  a.metric('mcs_cloudmap_calls_total', 'operation="discoverInstances"');

/**
 * Forged feed records naming `names` (Kubernetes services of `ns`), as many made-up writers as
 * it takes to fit them within Cloud Map's 5,000 characters a record, every entry with a new
 * sequence number at each advance (`round`).
 */
function floodRecords(ns: string, names: readonly string[], round: number): CloudMapInstance[] {
  const out: CloudMapInstance[] = [];
  let left = [...names];
  const base = 1 + round * 10_000;
  for (let w = 0; left.length > 0 && w < 50; w++) {
    const changes: FeedEntry[] = left.map((name, k) => ({ namespace: ns, name, seq: base + k }));
    const { instance, kept } = encodeFeed({
      cluster: { clusterId: `flood-${String(w)}`, clustersetId: CLUSTERSET },
      epoch: 'flood',
      seq: base + changes.length,
      floor: base - 1,
      updatedAtMs: Date.now(),
      changes,
    });
    const placed = new Set(kept.map((e) => e.name));
    left = left.filter((n) => !placed.has(n));
    out.push(instance);
  }
  return out;
}

export const feedFlood: Scenario = {
  id: 'feed-flood',
  fault:
    'forged feed records of made-up clusters (no heartbeat) naming 600 services of a namespace every cluster has, advanced every second (fast: 40 s, long: 60 s); meanwhile same-count changes in c1',
  expected: `each change imported in c2 within ${seconds(FLOOD_CHANGE_BOUND_MS)} s; each import agent makes at most ${String(FLOOD_READS_PER_S)} DiscoverInstances a second`,
  async run(ctx, out) {
    const s = await oneExport(ctx);
    await vouchedFeed(ctx, s.ns);
    const names = Array.from({ length: 600 }, (_, k) => `f${String(k)}`);
    const idleS = 10;
    const floodS = ctx.profile.name === 'long' ? 60 : 40;
    const callsOf = () => Promise.all(s.importers.map(discoverCalls));
    const emuDiscover = async () =>
      (await ctx.admin.stats()).operations['DiscoverInstances']?.calls ?? 0;
    const idle0 = await callsOf();
    const emuIdle0 = await emuDiscover();
    await sleep(idleS * 1000);
    const idle1 = await callsOf();
    const emu0 = await emuDiscover();
    const emuIdleRate = (emu0 - emuIdle0) / idleS;
    const flood0 = await callsOf();
    const seen0 = await Promise.all(s.importers.map((a) => unvouchedRounds(a, 'no-heartbeat')));
    const cpu0 = s.importers.map((a) => cpuSeconds(a.pid));
    const started = Date.now();
    let rounds = 0;
    let writers = 0;
    let flooding = true;
    const flooder = (async () => {
      while (flooding && Date.now() - started < floodS * 1000) {
        const tick = Date.now();
        const records = floodRecords(s.ns, names, rounds);
        writers = records.length;
        await Promise.all(
          records.map((r) =>
            ctx.records.register(FEED_NAMESPACE_NAME, feedService, r.id, r.attributes),
          ),
        ).catch(() => undefined);
        rounds++;
        await sleep(Math.max(0, 1000 - (Date.now() - tick)));
      }
    })();
    const changes: (number | undefined)[] = [];
    try {
      // Three changes spread over the flood, each after the readers have had time to fall behind.
      for (let k = 1; k <= 3; k++) {
        await sleep(Math.max(0, started + (k * floodS * 1000) / 4 - Date.now()));
        changes.push(await hiddenChange(ctx, s, 10 + k, 6 * HIDDEN_CHANGE_BOUND_MS));
      }
      await flooder;
    } finally {
      flooding = false;
      await flooder;
    }
    const elapsedS = (Date.now() - started) / 1000;
    const flood1 = await callsOf();
    const seen1 = await Promise.all(s.importers.map((a) => unvouchedRounds(a, 'no-heartbeat')));
    const cpu1 = s.importers.map((a) => cpuSeconds(a.pid));
    const emu1 = await emuDiscover();
    const rate = (a: number[], b: number[], dt: number) =>
      b.map((x, k) => Math.round(((x - (a[k] ?? 0)) / dt) * 10) / 10);
    const idleRates = rate(idle0, idle1, idleS);
    const floodRates = rate(flood0, flood1, elapsedS);
    const cpu = cpu1.map((x, k) => Math.round((x - (cpu0[k] ?? 0)) * 10) / 10);
    const emuFloodRate = (emu1 - emu0) / elapsedS;
    const worst = changes.some((c) => c === undefined)
      ? undefined
      : Math.max(...(changes as number[]));
    out.figure('names a second', names.length);
    // The forged writers have no heartbeat: an import agent that read them counts them.
    out.check(
      seen1.every((n, k) => n > (seen0[k] ?? 0)),
      'an import agent counted no unvouched feed round during the flood: the forged records were not read',
    );
    out.figure('forged writers', writers);
    out.figure('flood s', Math.round(elapsedS));
    checkBound(
      out,
      'worst change in c2 s',
      worst,
      FLOOD_CHANGE_BOUND_MS,
      6 * HIDDEN_CHANGE_BOUND_MS,
    );
    out.figure('DiscoverInstances/s per importer (idle)', Math.max(...idleRates));
    out.figure('DiscoverInstances/s per importer (flood)', Math.max(...floodRates));
    out.figure(
      'emulator DiscoverInstances/s, all callers (idle)',
      Math.round(emuIdleRate * 10) / 10,
    );
    out.figure(
      'emulator DiscoverInstances/s, all callers (flood)',
      Math.round(emuFloodRate * 10) / 10,
    );
    out.figure('import agent CPU s in flood', Math.max(...cpu));
    out.observe(
      `${String(rounds)} advances of ${String(writers)} forged records naming ${String(names.length)} services over ${seconds(elapsedS * 1000)} s; changes reached c2 in ${changes.map((c) => (c === undefined ? 'never' : `${seconds(c)} s`)).join(', ')}; DiscoverInstances per importer ${floodRates.join(' / ')} a second (idle ${idleRates.join(' / ')}); import agents' CPU ${cpu.join(' / ')} s during the flood`,
    );
    // Every import agent read services at start: a zero total means the counter was not read.
    out.check(
      flood1.every((n) => n > 0),
      'an import agent\'s mcs_cloudmap_calls_total{operation="discoverInstances"} was not found',
    );
    out.check(
      floodRates.every((r) => r <= FLOOD_READS_PER_S),
      `an import agent made ${String(Math.max(...floodRates))} DiscoverInstances a second during the flood (bound ${String(FLOOD_READS_PER_S)})`,
    );
  },
};
