// kill -9 of the export agent while it writes a large first sync: after the restarts Cloud Map
// must hold exactly the exported instances, none twice, none left over.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosContext } from '../context.js';
import { exportService, podIps } from '../kube.js';
import { auditInstances } from '../records.js';
import { seconds, type Scenario } from '../scenario.js';
import { waitFor } from '../../wait.js';

async function registered(ctx: ChaosContext): Promise<number> {
  return (await ctx.admin.stats()).operations['RegisterInstance']?.succeeded ?? 0;
}

async function writes(ctx: ChaosContext): Promise<number> {
  const ops = (await ctx.admin.stats()).operations;
  return (ops['RegisterInstance']?.calls ?? 0) + (ops['DeregisterInstance']?.calls ?? 0);
}

export const killMidSync: Scenario = {
  id: 'kill-9-mid-sync',
  fault:
    'kill -9 of the export agent 5 times during its first sync of N services × 5 endpoints, restarted each time',
  expected:
    'exactly the exported instances in Cloud Map: one export record and 5 endpoints per service, no orphans, no duplicates',
  async run(ctx, out) {
    const p = ctx.profile;
    const ns = await ctx.namespace();
    const c1 = ctx.cluster(0);
    const names = Array.from({ length: p.services }, (_, i) => `svc-${String(i).padStart(3, '0')}`);
    const ipsOf = (i: number) => podIps(1, p.endpointsPerService, i * p.endpointsPerService);
    for (const [i, name] of names.entries()) await exportService(c1, ns, name, ipsOf(i));
    const total = p.services * (p.endpointsPerService + 1);
    out.figure('services × endpoints', `${p.services} × ${p.endpointsPerService}`);
    // The default write rate (20/s) keeps the sync long enough to be cut into 6 parts.
    const agent = ctx.agent('export', c1, {
      args: ['--register-rate=20'],
      timings: { heartbeatSeconds: 600 },
    });
    const writesBefore = await writes(ctx);
    const step = Math.floor(total / (p.kills + 1));
    let midSync = 0;
    const base = await registered(ctx);
    for (let k = 1; k <= p.kills; k++) {
      await agent.start({ ready: false });
      const target = base + step * k;
      await waitFor(
        `RegisterInstance count ${target}`,
        async () => (await registered(ctx)) >= target || !agent.running,
        {
          timeoutMs: 180_000,
          intervalMs: 50,
        },
      );
      await agent.kill9();
      const own = (await ctx.records.instancesOfAll(ns, names)).flat().length;
      if (own < total) midSync += 1;
      await sleep(200);
    }
    const restartedAt = Date.now();
    await agent.start();
    let last = '';
    await waitFor(
      'Cloud Map holds exactly the exported instances',
      async () => {
        const audits = (await ctx.records.instancesOfAll(ns, names)).map((list, i) =>
          auditInstances(list, c1.name, ipsOf(i)),
        );
        const bad = audits.filter(
          (a) =>
            a.exportRecords !== 1 || a.missing.length + a.orphans.length + a.duplicates.length > 0,
        );
        last = `${bad.length} services not exact`;
        return bad.length === 0;
      },
      { timeoutMs: (total / 20 + 120) * 1000, intervalMs: 2_000 },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; last: ${last}`);
    });
    const convergeMs = Date.now() - restartedAt;
    await sleep(3_000); // anything still in flight would show now
    const audits = (await ctx.records.instancesOfAll(ns, names)).map((list, i) =>
      auditInstances(list, c1.name, ipsOf(i)),
    );
    const found = audits.reduce((a, b) => a + b.total, 0);
    const orphans = audits.reduce((a, b) => a + b.orphans.length, 0);
    const duplicates = audits.reduce(
      (a, b) => a + b.duplicates.length + Math.max(0, b.exportRecords - 1),
      0,
    );
    const w = (await writes(ctx)) - writesBefore;
    out.figure('kills mid-sync', `${midSync}/${p.kills}`);
    out.figure('instances expected', total);
    out.figure('instances found', found);
    out.figure('orphans', orphans);
    out.figure('duplicates', duplicates);
    out.figure('writes made', w);
    out.figure('converge after last restart s', seconds(convergeMs));
    out.observe(
      `${found}/${total} instances, ${orphans} orphans, ${duplicates} duplicates after ${midSync} kills mid-sync; ${w} Register/Deregister calls`,
    );
    out.check(midSync === p.kills, `only ${midSync} of ${p.kills} kills happened mid-sync`);
    out.check(found === total && orphans === 0 && duplicates === 0, 'Cloud Map records not exact');
  },
};
