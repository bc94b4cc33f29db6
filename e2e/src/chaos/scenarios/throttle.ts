// Throttling: half of every Cloud Map call answered ThrottlingException/RequestLimitExceeded
// while endpoints change and a new Service is exported.
import { setTimeout as sleep } from 'node:timers/promises';
import { exportService, podIps, setEndpoints } from '../kube.js';
import { auditInstances } from '../records.js';
import { fastPeriodS } from '../profile.js';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch, waitImported } from '../watch.js';
import { oneExport } from './setup.js';

export const throttling: Scenario = {
  id: 'throttling',
  fault:
    'Cloud Map throttles 50 % of all calls (every agent) while endpoints change and a new Service is exported',
  expected:
    'no import loses an endpoint; everything converges (during the throttling or within one fast poll period after); records exact',
  async run(ctx, out) {
    const p = ctx.profile;
    const s = await oneExport(ctx);
    const c1 = ctx.cluster(0);
    const watch = new ImportWatch(ctx.clusters, s.ns);
    await watch.start();
    const before = (await ctx.admin.stats()).totals.throttled;
    await ctx.admin.throttle('*', { share: p.throttleShare });
    const startedAt = Date.now();
    const changed = podIps(1, 6);
    await setEndpoints(c1, s.ns, s.service, changed);
    const newIps = podIps(1, 2, 50);
    await exportService(c1, s.ns, 'late', newIps);
    await sleep(p.throttleS * 1000);
    await ctx.admin.clearFaults();
    const liftedAt = Date.now();
    const throttled = (await ctx.admin.stats()).totals.throttled - before;
    await waitImported(ctx.clusters, s.ns, s.service, c1.name, changed, 180_000);
    await waitImported(ctx.clusters, s.ns, 'late', c1.name, newIps, 180_000);
    const afterLiftMs = Date.now() - liftedAt;
    await watch.stop();
    const bound = (fastPeriodS(p) + p.slackS) * 1000;
    out.figure('throttled s', p.throttleS);
    out.figure('calls throttled', throttled);
    out.figure('endpoints lost', watch.lost);
    out.figure('converge after lift s', seconds(afterLiftMs));
    out.figure('elapsed since fault s', seconds(Date.now() - startedAt));
    out.observe(
      `${throttled} calls throttled; ${watch.lost} endpoints dropped; converged ${seconds(afterLiftMs)} s after the throttling ended`,
    );
    out.check(throttled > 0, 'no call was throttled (the fault did not happen)');
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped under throttling`);
    out.check(
      afterLiftMs <= bound,
      `converged ${seconds(afterLiftMs)} s after the throttling ended > ${seconds(bound)} s`,
    );
    for (const [name, ips] of [
      [s.service, changed],
      ['late', newIps],
    ] as const) {
      const a = auditInstances(await ctx.records.instances(s.ns, name), c1.name, ips);
      out.check(
        a.exportRecords === 1 && a.missing.length + a.orphans.length + a.duplicates.length === 0,
        `${name}: Cloud Map records not exact (${a.total} instances)`,
      );
    }
  },
};
