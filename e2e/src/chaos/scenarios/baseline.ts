// The suite's own control: the same setup as the fault scenarios and no fault. Anything lost
// here is not caused by a fault, and the fault scenarios' figures must be read against it.
import { setTimeout as sleep } from 'node:timers/promises';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch } from '../watch.js';
import { oneExport } from './setup.js';

export const baseline: Scenario = {
  id: 'baseline-no-fault',
  fault:
    'none: one exported Service, both agents running, watched for several heartbeat TTLs (fast: 2, long: 4)',
  expected: 'no import loses an endpoint',
  async run(ctx, out) {
    const s = await oneExport(ctx);
    const watch = new ImportWatch(ctx.clusters, s.ns, 250);
    await watch.start();
    const forMs = (ctx.profile.name === 'long' ? 4 : 2) * ctx.profile.import.ttlS * 1000;
    // The heartbeat's age as stored in Cloud Map, sampled each second: past the TTL, the
    // importers are right to drop the cluster and the fault is the exporter's renewal.
    let maxAgeMs = 0;
    const until = Date.now() + forMs;
    while (Date.now() < until) {
      const at = await ctx.records.heartbeatMs(s.ns, ctx.cluster(0).name).catch(() => undefined);
      if (at !== undefined) maxAgeMs = Math.max(maxAgeMs, Date.now() - at);
      await sleep(1_000);
    }
    await watch.stop();
    out.figure('max heartbeat age s', seconds(maxAgeMs));
    out.figure('watched s', seconds(forMs));
    out.figure('samples', watch.samples);
    out.figure('endpoints lost', watch.lost);
    out.figure('samples below start', watch.samplesBelow);
    out.figure('control s', seconds(s.controlMs));
    out.observe(
      `${watch.lost} of ${watch.baseline} endpoints dropped with no fault${watch.firstLoss === '' ? '' : ` (first: ${watch.firstLoss})`}`,
    );
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped with no fault`);
  },
};
