// Ten-cluster scenarios (issue 34): what grows with the number of clusters. One Service
// exported by all ten (the merge of ten sources, a ports conflict raised and cleared on every
// exporter), three clusters lost at once, a cluster joining a running clusterset, and the
// account quotas a ten-cluster clusterset can meet (instances per namespace, the
// DiscoverInstances rate). They run on the ten-cluster clusterset of `--part ten`.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ChaosAgent } from '../agent.js';
import type { ChaosContext } from '../context.js';
import {
  eventsAbout,
  exportService,
  importView,
  podIps,
  setEndpoints,
  type ChaosCluster,
} from '../kube.js';
import { fastPeriodS, heartbeatPeriodS } from '../profile.js';
import { seconds, type Scenario } from '../scenario.js';
import { waitFor } from '../../wait.js';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SE } from '../kube.js';

export const TEN = 10;
const SERVICE = 'web';
const PER_CLUSTER = 3;

/** Cluster i's addresses of the shared Service. */
const ipsOf = (i: number): string[] => podIps(i, PER_CLUSTER);

/** Sources (cluster names) and their addresses, as `name=ip,ip;...` sorted: compared whole. */
export function sourcesKey(bySource: ReadonlyMap<string, readonly string[]>): string {
  return [...bySource.entries()]
    .filter(([, ips]) => ips.length > 0)
    .map(([src, ips]) => `${src}=${[...ips].sort().join(',')}`)
    .sort()
    .join(';');
}

/** Waits until every one of `where` imports exactly `expected` (source → addresses); ms taken. */
async function waitMerged(
  where: readonly ChaosCluster[],
  ns: string,
  expected: ReadonlyMap<string, readonly string[]>,
  timeoutMs: number,
): Promise<number> {
  const want = sourcesKey(expected);
  const started = Date.now();
  let last = '';
  await waitFor(
    `${SERVICE} merged from ${String(expected.size)} clusters in ${String(where.length)} clusters`,
    async () => {
      for (const c of where) {
        const got = sourcesKey((await importView(c, ns)).endpoints.get(SERVICE) ?? new Map());
        if (got !== want) {
          last = `${c.name} has ${String(got.split(';').filter((x) => x !== '').length)} sources`;
          return false;
        }
      }
      return true;
    },
    { timeoutMs, intervalMs: 500 },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; last: ${last}`);
  });
  return Date.now() - started;
}

const expectedOf = (idx: readonly number[], clusters: readonly ChaosCluster[]) =>
  new Map(idx.map((i) => [clusters[i]?.name ?? '?', ipsOf(i)]));

interface TenSetup {
  readonly ns: string;
  readonly exporters: ChaosAgent[];
  readonly importers: ChaosAgent[];
  /** From the importers' start until every one of them imported the merge. */
  readonly mergeMs: number;
}

/**
 * `web` with 3 endpoints in every cluster; export and import agents in the clusters of
 * `running` (the others have the Service and its ServiceExport but no agents yet).
 */
async function tenSetup(ctx: ChaosContext, running: readonly number[]): Promise<TenSetup> {
  if (ctx.clusters.length < TEN) throw new Error(`needs ${String(TEN)} clusters (--part ten)`);
  const ns = await ctx.namespace();
  const all = ctx.clusters.map((_, i) => i);
  for (const i of all) await exportService(ctx.cluster(i), ns, SERVICE, ipsOf(i));
  const exporters = all.map((i) => ctx.agent('export', ctx.cluster(i)));
  const importers = all.map((i) => ctx.agent('import', ctx.cluster(i)));
  for (const i of running) await exporters[i]?.start();
  const importStart = Date.now();
  for (const i of running) await importers[i]?.start();
  await waitMerged(
    running.map((i) => ctx.cluster(i)),
    ns,
    expectedOf(running, ctx.clusters),
    ctx.profile.setupTimeoutS * 1000,
  );
  return { ns, exporters, importers, mergeMs: Date.now() - importStart };
}

/** The ServiceExport's Conflict condition in cluster c: `status/reason`, '' when absent. */
async function conflictOf(c: ChaosCluster, ns: string): Promise<string> {
  const se = (await c.kc
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...SE, namespace: ns, name: SERVICE })) as {
    status?: { conditions?: { type: string; status: string; reason?: string }[] };
  };
  const cond = se.status?.conditions?.find((x) => x.type === 'Conflict');
  return cond === undefined ? '' : `${cond.status}/${cond.reason ?? ''}`;
}

/** Sets the first port of `web` in cluster c (80 is what every other cluster has). */
async function setServicePort(c: ChaosCluster, ns: string, port: number): Promise<void> {
  const api = c.kc.makeApiClient(CoreV1Api);
  const svc = await api.readNamespacedService({ namespace: ns, name: SERVICE });
  const ports = svc.spec?.ports ?? [];
  if (ports[0] !== undefined) ports[0].port = port;
  await api.replaceNamespacedService({ namespace: ns, name: SERVICE, body: svc });
}

/** Conflict bound: an exporter learns the others' ports at its resync at the latest. */
const conflictBoundMs = (ctx: ChaosContext): number =>
  (ctx.profile.export.resyncS + fastPeriodS(ctx.profile) + 2 * ctx.profile.slackS) * 1000;

export const tenMerge: Scenario = {
  id: 'ten-merge-conflict',
  fault:
    'one Service exported by all ten clusters; then one exporter changes its port (80 → 81) and back',
  expected:
    'every importer merges ten source clusters; Conflict=True (PortConflict) on all ten ServiceExports within one export resync + one fast poll, False again after the port is restored; the merge stays whole',
  async run(ctx, out) {
    const all = ctx.clusters.map((_, i) => i);
    const s = await tenSetup(ctx, all);
    const expected = expectedOf(all, ctx.clusters);
    out.figure('clusters', TEN);
    out.figure('ten sources merged in all ten s', seconds(s.mergeMs));
    const bound = conflictBoundMs(ctx);
    const odd = ctx.cluster(TEN - 1);
    const conflictEverywhere = async (want: (c: string) => boolean, what: string) => {
      const started = Date.now();
      let last = '';
      await waitFor(
        what,
        async () => {
          for (const c of ctx.clusters) {
            const cond = await conflictOf(c, s.ns);
            if (!want(cond)) {
              last = `${c.name}: Conflict ${cond || 'absent'}`;
              return false;
            }
          }
          return true;
        },
        { timeoutMs: bound + 60_000, intervalMs: 500 },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; last: ${last}`);
      });
      return Date.now() - started;
    };
    await setServicePort(odd, s.ns, 81);
    const raisedMs = await conflictEverywhere(
      (c) => c === 'True/PortConflict',
      'Conflict=True/PortConflict on all ten',
    );
    out.figure('conflict raised on all ten s', seconds(raisedMs));
    const events = await eventsAbout(ctx.cluster(0), s.ns, SERVICE);
    out.check(
      events.some((e) => e.includes('ExportConflict') && e.includes('PortConflict')),
      `no ExportConflict Event on ${ctx.cluster(0).name}'s ServiceExport`,
    );
    // The merge is not cut by a conflict: every source keeps its endpoints.
    await waitMerged(ctx.clusters, s.ns, expected, 1_000 + ctx.profile.slackS * 1000);
    await setServicePort(odd, s.ns, 80);
    const clearedMs = await conflictEverywhere(
      (c) => c.startsWith('False/'),
      'Conflict=False on all ten',
    );
    out.figure('conflict cleared on all ten s', seconds(clearedMs));
    out.figure('bound s', seconds(bound));
    await waitMerged(ctx.clusters, s.ns, expected, 1_000 + ctx.profile.slackS * 1000);
    out.observe(
      `ten sources merged in every importer ${seconds(s.mergeMs)} s after the importers started; a port change in ${odd.name} raised Conflict on all ten ServiceExports in ${seconds(raisedMs)} s and its revert cleared it in ${seconds(clearedMs)} s (bound ${seconds(bound)} s); the merge stayed whole`,
    );
    out.check(raisedMs <= bound, `Conflict raised in ${seconds(raisedMs)} s > ${seconds(bound)} s`);
    out.check(
      clearedMs <= bound,
      `Conflict cleared in ${seconds(clearedMs)} s > ${seconds(bound)} s`,
    );
  },
};

export const tenKillThree: Scenario = {
  id: 'ten-kill-three',
  fault:
    'three of ten clusters lost at once: their export and import agents killed (kill -9), then started again',
  expected:
    "their endpoints leave every surviving importer between TTL and TTL + one heartbeat check (+ slack) after each one's last heartbeat; the seven others' endpoints never drop; all back after the restart",
  async run(ctx, out) {
    const p = ctx.profile;
    const all = ctx.clusters.map((_, i) => i);
    const s = await tenSetup(ctx, all);
    const lost = [7, 8, 9];
    const alive = all.filter((i) => !lost.includes(i));
    const survivors = alive.map((i) => ctx.cluster(i));
    const lostNames = lost.map((i) => ctx.cluster(i).name);
    const aliveExpected = expectedOf(alive, ctx.clusters);
    // The seven others, sampled while the three go: any short sample is a loss.
    let running = true;
    let samples = 0;
    let shortSamples = 0;
    const sampler = (async () => {
      while (running) {
        for (const c of survivors) {
          try {
            const got = (await importView(c, s.ns)).endpoints.get(SERVICE) ?? new Map();
            for (const [src, ips] of aliveExpected)
              if ((got.get(src)?.length ?? 0) < ips.length) shortSamples += 1;
          } catch {
            // an API hiccup is not a loss
          }
        }
        samples += 1;
        await sleep(500);
      }
    })();
    await Promise.all(lost.flatMap((i) => [s.exporters[i]?.kill9(), s.importers[i]?.kill9()]));
    await sleep(1_500); // a renewal submitted just before the kill has landed by now
    const beats: number[] = [];
    for (const name of lostNames) {
      const at = await ctx.records.heartbeatMs(s.ns, name);
      if (at === undefined) throw new Error(`no heartbeat of ${name} in ${s.ns}`);
      beats.push(at);
    }
    const first = Math.min(...beats);
    const lastBeat = Math.max(...beats);
    const ttlMs = p.import.ttlS * 1000;
    const latestMs = ttlMs + (heartbeatPeriodS(p) + p.slackS) * 1000;
    let firstDrop: number | undefined;
    await waitFor(
      'the three lost clusters evicted from every survivor',
      async () => {
        let left = 0;
        for (const c of survivors) {
          const got = (await importView(c, s.ns)).endpoints.get(SERVICE) ?? new Map();
          for (const n of lostNames) {
            const k = got.get(n)?.length ?? 0;
            if (k < PER_CLUSTER && firstDrop === undefined) firstDrop = Date.now();
            left += k;
          }
        }
        return left === 0;
      },
      { timeoutMs: Math.max(0, lastBeat + latestMs + 60_000 - Date.now()), intervalMs: 250 },
    );
    const goneAt = Date.now();
    running = false;
    await sampler;
    const firstDropAfter = (firstDrop ?? goneAt) - first;
    out.figure('TTL s', p.import.ttlS);
    out.figure('first drop after earliest heartbeat s', seconds(firstDropAfter));
    out.figure('all gone after latest heartbeat s', seconds(goneAt - lastBeat));
    out.figure('latest allowed s', seconds(latestMs));
    out.figure('survivor samples short', `${String(shortSamples)}/${String(samples * 7)}`);
    out.check(
      firstDropAfter >= ttlMs - 250,
      `a lost cluster's endpoints dropped ${seconds(firstDropAfter)} s after its heartbeat, before the TTL`,
    );
    out.check(
      goneAt - lastBeat <= latestMs,
      `lost clusters still imported ${seconds(goneAt - lastBeat)} s after their last heartbeat > ${seconds(latestMs)} s`,
    );
    out.check(
      shortSamples === 0,
      `${String(shortSamples)} survivor samples missed endpoints of the seven others`,
    );
    await waitMerged(survivors, s.ns, aliveExpected, 1_000 + p.slackS * 1000);
    const restartedAt = Date.now();
    for (const i of lost) await s.exporters[i]?.start();
    for (const i of lost) await s.importers[i]?.start();
    const backMs = await waitMerged(
      ctx.clusters,
      s.ns,
      expectedOf(all, ctx.clusters),
      p.setupTimeoutS * 1000,
    ).then(() => Date.now() - restartedAt);
    out.figure('all ten back after restart s', seconds(backMs));
    out.observe(
      `${lostNames.join(', ')} killed: first drop ${seconds(firstDropAfter)} s after the earliest last heartbeat, gone from all seven survivors ${seconds(goneAt - lastBeat)} s after the latest (TTL ${p.import.ttlS} s, latest ${seconds(latestMs)} s); the seven others short in ${String(shortSamples)} samples; all ten merged again ${seconds(backMs)} s after the restart`,
    );
  },
};

export const tenJoin: Scenario = {
  id: 'ten-join',
  fault:
    'a tenth cluster joins a running nine-cluster clusterset: its export and import agents start',
  expected:
    'its imports hold all ten sources, and its export reaches the nine others, within the cold-sync bound (one slow poll period + slack)',
  async run(ctx, out) {
    const p = ctx.profile;
    const nine = ctx.clusters.map((_, i) => i).filter((i) => i < TEN - 1);
    const s = await tenSetup(ctx, nine);
    const joiner = TEN - 1;
    const all = [...nine, joiner];
    const bound = (p.import.slowPollS * (1 + p.import.jitter) + p.slackS) * 1000;
    // The bound runs from the agents' readiness: process start (Node loading its bundle) is
    // the machine's share, reported apart (it grows with the load average, not the design).
    const startedAt = Date.now();
    await Promise.all([s.exporters[joiner]?.start(), s.importers[joiner]?.start()]);
    const readyAt = Date.now();
    const expected = expectedOf(all, ctx.clusters);
    const joinerMs = await waitMerged([ctx.cluster(joiner)], s.ns, expected, bound + 60_000).then(
      () => Date.now() - readyAt,
    );
    const othersMs = await waitMerged(
      nine.map((i) => ctx.cluster(i)),
      s.ns,
      expected,
      bound + 60_000,
    ).then(() => Date.now() - readyAt);
    out.figure('agents start to ready s', seconds(readyAt - startedAt));
    out.figure('joiner imports all ten after ready s', seconds(joinerMs));
    out.figure('joiner exported in all nine others after ready s', seconds(othersMs));
    out.figure('cold-sync bound s', seconds(bound));
    out.observe(
      `${ctx.cluster(joiner).name} joined: agents ready ${seconds(readyAt - startedAt)} s after start; it imported all ten sources ${seconds(joinerMs)} s and the nine others imported it ${seconds(othersMs)} s after that (bound ${seconds(bound)} s)`,
    );
    out.check(
      joinerMs <= bound,
      `the joiner's imports took ${seconds(joinerMs)} s > ${seconds(bound)} s`,
    );
    out.check(
      othersMs <= bound,
      `the joiner's export took ${seconds(othersMs)} s > ${seconds(bound)} s`,
    );
  },
};

/** Endpoints per cluster in the quota scenario: ten exports of 201 instances pass 2,000. */
const QUOTA_ENDPOINTS = 200;
/** The documented Cloud Map quota the ServiceExport must name. */
const NAMESPACE_QUOTA = 2000;

async function readyOf(c: ChaosCluster, ns: string, name: string) {
  const se = (await c.kc
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...SE, namespace: ns, name })) as {
    status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
  };
  return se.status?.conditions?.find((x) => x.type === 'Ready');
}

async function opStats(ctx: ChaosContext, op: string) {
  const o = (await ctx.admin.stats()).operations[op];
  return { calls: o?.calls ?? 0, refused: (o?.clientErrors ?? 0) + (o?.throttled ?? 0) };
}

export const tenQuotas: Scenario = {
  id: 'ten-quotas',
  fault: `ten clusters export ${String(QUOTA_ENDPOINTS)} endpoints each into one namespace (${String(TEN * (QUOTA_ENDPOINTS + 1))} instances > the ${String(NAMESPACE_QUOTA)} instances-per-namespace quota, at its real figure); then ten importers read them while the rest of the account spends 995/s of the DiscoverInstances quota (1,000/s, 2,000 burst: its real figures)`,
  expected:
    'the refused exporters show Ready=False and an ExportFailed Event naming "Instances per namespace" (2000) and the Service Quotas request; refused RegisterInstance calls stay bounded (no retry storm); freeing room lets them finish; throttled importers log the DiscoverInstances quota (1,000/s, 2,000 burst), back off, and complete',
  async run(ctx, out) {
    const p = ctx.profile;
    if (ctx.clusters.length < TEN) throw new Error(`needs ${String(TEN)} clusters (--part ten)`);
    const ns = await ctx.namespace();
    const names = ctx.clusters.map((_, i) => `big-${String(i)}`);
    const ips = (i: number, n = QUOTA_ENDPOINTS) => podIps(i, n);
    for (const [i, c] of ctx.clusters.entries()) await exportService(c, ns, names[i] ?? '', ips(i));
    const exporters = ctx.clusters.map((c) => ctx.agent('export', c));
    for (const e of exporters) await e.start();
    // Who is refused depends on who wrote first: find them by their condition.
    const refusedAt = Date.now();
    let refused: number[] = [];
    await waitFor(
      'a ServiceExport refused by the instances-per-namespace quota',
      async () => {
        refused = [];
        for (const [i, c] of ctx.clusters.entries()) {
          const r = await readyOf(c, ns, names[i] ?? '');
          if (r?.status === 'False' && (r.message ?? '').includes('Instances per namespace'))
            refused.push(i);
        }
        return refused.length > 0;
      },
      { timeoutMs: p.setupTimeoutS * 1000, intervalMs: 1_000 },
    );
    out.figure('refused after s', seconds(Date.now() - refusedAt));
    const first = refused[0] ?? 0;
    const cond = await readyOf(ctx.cluster(first), ns, names[first] ?? '');
    const message = cond?.message ?? '';
    out.check(
      message.includes(`(${String(NAMESPACE_QUOTA)} by default) is adjustable`) &&
        message.includes('Service Quotas'),
      `the condition does not name the quota and the request: ${message}`,
    );
    const events = await eventsAbout(ctx.cluster(first), ns, names[first] ?? '');
    out.check(
      events.some((e) => e.includes('ExportFailed') && e.includes('Instances per namespace')),
      `no ExportFailed Event naming the quota on ${names[first] ?? ''}`,
    );
    // A window with the quota binding: count RegisterInstance calls and refusals.
    const windowS = Math.max(30, p.export.resyncS);
    const before = await opStats(ctx, 'RegisterInstance');
    await sleep(windowS * 1000);
    const after = await opStats(ctx, 'RegisterInstance');
    const calls = after.calls - before.calls;
    const refusedCalls = after.refused - before.refused;
    // Without backoff a refused exporter would spend its whole write rate (the profile's
    // --register-rate) on refusals; with it, a few tries per backoff step.
    const stormBound = TEN * windowS; // one refused call per exporter per second at most
    out.figure('refused exporters', refused.length);
    out.figure('window s', windowS);
    out.figure('RegisterInstance calls in window', calls);
    out.figure('refused in window', refusedCalls);
    out.check(
      refusedCalls <= stormBound,
      `${String(refusedCalls)} refused RegisterInstance calls in ${String(windowS)} s > ${String(stormBound)} (retry storm)`,
    );
    // Room freed: cluster 0 exports 50 fewer endpoints; every export completes.
    const freedAt = Date.now();
    await setEndpoints(ctx.cluster(0), ns, names[0] ?? '', ips(0, QUOTA_ENDPOINTS - 50));
    await waitFor(
      'every ServiceExport Ready=True once room is freed',
      async () => {
        for (const [i, c] of ctx.clusters.entries())
          if ((await readyOf(c, ns, names[i] ?? ''))?.status !== 'True') return false;
        return true;
      },
      { timeoutMs: p.setupTimeoutS * 1000 + 120_000, intervalMs: 1_000 },
    );
    out.figure('all exported after room freed s', seconds(Date.now() - freedAt));

    // DiscoverInstances: the ten importers' first reads of ten services (200 endpoints each)
    // against the account's bucket at AWS's figure, 1,000/s (2,000 burst), of which the rest
    // of the account already spends 995/s (its burst spent). Ten agents cannot reach the
    // quota by themselves: their own limiters, 100/s each, stop at exactly 1,000/s. The quota
    // is per account, so what binds in the field is the clusterset plus everything else
    // there; the emulator's stand-in for everything else leaves ours 5/s.
    const rate = { ratePerSecond: 1000, burst: 2000, otherUsersPerSecond: 995 };
    const left = rate.ratePerSecond - rate.otherUsersPerSecond;
    await ctx.admin.patchFaults({ rateLimits: { DiscoverInstances: rate } });
    const d0 = await opStats(ctx, 'DiscoverInstances');
    const t0 = Date.now();
    const importers = ctx.clusters.map((c) => ctx.agent('import', c));
    for (const im of importers) await im.start();
    await waitFor(
      'every importer holds all ten services',
      async () => {
        for (const c of ctx.clusters) {
          const view = await importView(c, ns);
          for (const [i, n] of names.entries()) {
            const want = i === 0 ? QUOTA_ENDPOINTS - 50 : QUOTA_ENDPOINTS;
            if ((view.endpoints.get(n)?.get(ctx.cluster(i).name)?.length ?? 0) !== want)
              return false;
          }
        }
        return true;
      },
      { timeoutMs: p.setupTimeoutS * 1000 + 300_000, intervalMs: 2_000 },
    );
    const importS = (Date.now() - t0) / 1000;
    const d1 = await opStats(ctx, 'DiscoverInstances');
    const dCalls = d1.calls - d0.calls;
    const dThrottled = d1.refused - d0.refused;
    const needed = TEN * TEN;
    // What the bucket let through, and the agents' retries on top: a storm would be their own
    // limiters' 100/s each.
    const allowed = left * importS;
    const dBound = 6 * needed + 2 * TEN * importS;
    let named = 0;
    let throttles = 0;
    for (const im of importers) {
      throttles += await im.metric('mcs_cloudmap_throttles_total', 'discoverInstances');
      if (im.logLines('DiscoverInstances quota (1,000 requests/s steady, 2,000 burst') > 0)
        named += 1;
    }
    out.figure('DiscoverInstances bucket', `1,000/s, 2,000 burst; other users 995/s`);
    out.figure('imports complete s', seconds(importS * 1000));
    out.figure('DiscoverInstances calls', dCalls);
    out.figure('throttled', dThrottled);
    out.figure('bucket allowed', Math.round(allowed));
    out.figure('importers naming the quota', `${String(named)}/${String(TEN)}`);
    out.check(
      dThrottled > 0,
      'no DiscoverInstances call was throttled (the quota was not reached)',
    );
    out.check(named > 0, 'no importer logged the DiscoverInstances quota');
    out.check(throttles > 0, 'mcs_cloudmap_throttles_total did not count the throttles');
    out.check(
      dCalls <= dBound,
      `${String(dCalls)} DiscoverInstances calls for ${String(needed)} reads in ${importS.toFixed(0)} s > ${dBound.toFixed(0)} (retry storm)`,
    );
    out.observe(
      `${String(refused.length)} of ten exporters refused with Ready=False naming "Instances per namespace" (2000) and the Service Quotas request, ExportFailed Event; ${String(refusedCalls)} refused RegisterInstance calls in ${String(windowS)} s (bound ${String(stormBound)}); all exported ${seconds(Date.now() - freedAt)} s after 50 instances were freed; DiscoverInstances at 1,000/s with 995/s spent by the rest of the account: ${String(dCalls)} calls, ${String(dThrottled)} throttled for ${String(needed)} reads, imports complete in ${importS.toFixed(0)} s, ${String(named)} importers logged the quota`,
    );
  },
};

export const tenScenarios: readonly Scenario[] = [tenJoin, tenMerge, tenKillThree, tenQuotas];
