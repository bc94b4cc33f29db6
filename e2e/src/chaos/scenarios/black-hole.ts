// A hung connection: the import agents' way to Cloud Map holds every connection open and never
// answers (a stuck proxy or NAT), then heals; what the black hole took stays unanswered.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosAgent } from '../agent.js';
import { podIps, serviceImport } from '../kube.js';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch } from '../watch.js';
import { change, oneExport } from './setup.js';

const holeS = 30;
/** Issue 31: blindness reported within 15 s; a change made after the heal imported ≤ 3 s. */
const blindBoundS = 15;
const afterHealBoundS = 3;

/** Whether the agent says it is blind: its reachable metric 0 and /readyz not 200. */
async function saysBlind(a: ChaosAgent): Promise<boolean> {
  const [reachable, ready] = await Promise.all([
    a.metric('mcs_import_cloudmap_reachable'),
    a.get('/readyz'),
  ]);
  return reachable === 0 && ready.status !== 200 && ready.status !== 0;
}

export const importerBlackHole: Scenario = {
  id: 'importer-black-hole',
  fault: `Cloud Map black-holed for the import agents (connections held open, never answered nor reset) for ${String(holeS)} s, then healed`,
  expected: `each import agent reports itself blind (mcs_import_cloudmap_reachable 0, /readyz not ready, ServiceImport Ready message) within ${String(blindBoundS)} s; no import loses an endpoint; a change made after the heal is imported within ${String(afterHealBoundS)} s`,
  async run(ctx, out) {
    const proxy = await ctx.proxy();
    const s = await oneExport(ctx, { importerUrl: proxy.url });
    const watch = new ImportWatch(ctx.clusters, s.ns);
    await watch.start();
    out.figure('hole s', holeS);
    proxy.blackHole(true);
    const holeAt = Date.now();
    const blindAt = new Map<ChaosAgent, number>();
    let conditionSays = false;
    while (Date.now() - holeAt < holeS * 1000) {
      for (const a of s.importers)
        if (!blindAt.has(a) && (await saysBlind(a))) blindAt.set(a, Date.now());
      if (!conditionSays) {
        const si = await serviceImport(ctx.cluster(1), s.ns, s.service).catch(() => undefined);
        const ready = si?.status?.conditions?.find((c) => c.type === 'Ready');
        conditionSays = ready?.message?.includes('Cloud Map unreachable') ?? false;
      }
      await sleep(250);
    }
    const swallowed = proxy.swallowed;
    const connectionsAtHeal = proxy.connections;
    proxy.blackHole(false);
    const convergeMs = await change(ctx, s, podIps(1, 5), 120_000);
    await watch.stop();
    const blindMs = s.importers.map((a) => (blindAt.get(a) ?? Infinity) - holeAt);
    const worstBlindMs = Math.max(...blindMs);
    out.figure('blindness reported s', seconds(worstBlindMs));
    out.figure('calls swallowed', swallowed);
    out.figure('new connections after heal', proxy.connections - connectionsAtHeal);
    out.figure('change after heal s', seconds(convergeMs));
    out.figure('endpoints lost', watch.lost);
    out.observe(
      `blindness reported ${blindMs.map((ms) => `${String(seconds(ms))} s`).join(', ')} after the hole opened (metric 0 and /readyz not ready)${conditionSays ? ', ServiceImport Ready says Cloud Map unreachable' : ''}`,
    );
    out.observe(
      `${String(swallowed)} calls swallowed; a change made after the heal imported in ${String(seconds(convergeMs))} s; ${String(watch.lost)} of ${String(watch.baseline)} endpoints lost`,
    );
    out.check(swallowed > 0, 'the import agents made no call into the black hole');
    out.check(
      worstBlindMs <= blindBoundS * 1000,
      `blindness reported after ${String(seconds(worstBlindMs))} s > ${String(blindBoundS)} s (or never)`,
    );
    out.check(conditionSays, 'the ServiceImport Ready condition never said Cloud Map unreachable');
    out.check(watch.lost === 0, `${String(watch.lost)} endpoints dropped during the black hole`);
    out.check(
      convergeMs <= afterHealBoundS * 1000,
      `change after the heal imported in ${String(seconds(convergeMs))} s > ${String(afterHealBoundS)} s`,
    );
  },
};
