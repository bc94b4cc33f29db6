// Stale-cluster eviction: an exporting cluster that stops renewing its heartbeat loses its
// endpoints in every import once the heartbeat is TTL old — not before, and not much after.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosContext } from '../context.js';
import { heartbeatPeriodS } from '../profile.js';
import { seconds, type Outcome, type Scenario } from '../scenario.js';
import { importView } from '../kube.js';
import { ImportWatch, waitImported } from '../watch.js';
import { waitFor } from '../../wait.js';
import { oneExport, type OneExport } from './setup.js';

export interface EvictionTimes {
  /** When the fault began (ms since the epoch). */
  readonly faultAt: number;
  /** The last heartbeat renewal stored in Cloud Map. */
  readonly heartbeatAt: number;
}

/**
 * Applies `fault` (which stops c1's heartbeat), then waits until no cluster imports c1's
 * endpoints any more, and checks that this happened between TTL and TTL + one fast poll
 * period (+ slack) after c1's last heartbeat.
 */
export async function evictionTimes(
  ctx: ChaosContext,
  s: OneExport,
  out: Outcome,
  fault: () => Promise<void>,
): Promise<EvictionTimes> {
  const p = ctx.profile;
  const c1 = ctx.cluster(0).name;
  const watch = new ImportWatch(ctx.clusters, s.ns, 250);
  await watch.start();
  const faultAt = Date.now();
  await fault();
  await sleep(1_500); // a renewal submitted just before the fault has landed by now
  const heartbeatAt = await ctx.records.heartbeatMs(s.ns, c1);
  if (heartbeatAt === undefined) throw new Error(`no heartbeat of ${c1} in ${s.ns}`);
  const ttlMs = p.import.ttlS * 1000;
  const latestMs = ttlMs + (heartbeatPeriodS(p) + p.slackS) * 1000;
  await waitFor(
    `${c1}'s endpoints evicted everywhere`,
    async () => {
      for (const c of ctx.clusters) {
        const got = (await importView(c, s.ns)).endpoints.get(s.service)?.get(c1) ?? [];
        if (got.length > 0) return false;
      }
      return true;
    },
    { timeoutMs: Math.max(0, heartbeatAt + latestMs + 60_000 - Date.now()), intervalMs: 250 },
  );
  const goneAt = Date.now();
  await watch.stop();
  const firstLoss = watch.firstLossAt ?? goneAt;
  out.figure('TTL s', p.import.ttlS);
  out.figure('first drop after heartbeat s', seconds(firstLoss - heartbeatAt));
  out.figure('all gone after heartbeat s', seconds(goneAt - heartbeatAt));
  out.observe(
    `${c1}'s endpoints first dropped ${seconds(firstLoss - heartbeatAt)} s and gone everywhere ${seconds(goneAt - heartbeatAt)} s after its last heartbeat (TTL ${p.import.ttlS} s, latest ${seconds(latestMs)} s)`,
  );
  if (watch.firstLoss !== '') out.observe(`first drop: ${watch.firstLoss}`);
  out.check(
    firstLoss - heartbeatAt >= ttlMs - 250,
    `endpoints dropped ${seconds(firstLoss - heartbeatAt)} s after the last heartbeat, before the TTL`,
  );
  out.check(
    goneAt - heartbeatAt <= latestMs,
    `endpoints still imported ${seconds(goneAt - heartbeatAt)} s after the last heartbeat`,
  );
  return { faultAt, heartbeatAt };
}

export const staleEviction: Scenario = {
  id: 'stale-eviction',
  fault: 'the export agent is killed (kill -9) and stays down: its heartbeat stops',
  expected:
    'its endpoints go from every import after the TTL (measured from its last heartbeat), not before; the ServiceImport stays; a restart brings them back',
  async run(ctx, out) {
    const s = await oneExport(ctx);
    await evictionTimes(ctx, s, out, () => s.exporter.kill9());
    const c1 = ctx.cluster(0).name;
    for (const c of ctx.clusters) {
      const view = await importView(c, s.ns);
      out.check(
        view.imports.has(s.service),
        `the ServiceImport went from ${c.name} with the stale cluster`,
      );
    }
    const restartedAt = Date.now();
    await s.exporter.start();
    await waitImported(ctx.clusters, s.ns, s.service, c1, s.ips, 120_000);
    out.figure('back after restart s', seconds(Date.now() - restartedAt));
  },
};
