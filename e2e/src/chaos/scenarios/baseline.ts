// The suite's own control: the same setup as the fault scenarios and no fault. Anything lost
// here is not caused by a fault, and the fault scenarios' figures must be read against it.
import { setTimeout as sleep } from 'node:timers/promises';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch } from '../watch.js';
import { oneExport } from './setup.js';

export const baseline: Scenario = {
  id: 'baseline-no-fault',
  fault: 'none: one exported Service, both agents running, watched for 4 heartbeat TTLs',
  expected: 'no import loses an endpoint',
  async run(ctx, out) {
    const s = await oneExport(ctx);
    const watch = new ImportWatch(ctx.clusters, s.ns, 250);
    await watch.start();
    const forMs = 4 * ctx.profile.import.ttlS * 1000;
    await sleep(forMs);
    await watch.stop();
    out.figure('watched s', seconds(forMs));
    out.figure('samples', watch.samples);
    out.figure('endpoints lost', watch.lost);
    out.figure('control s', seconds(s.controlMs));
    out.observe(
      `${watch.lost} of ${watch.baseline} endpoints dropped with no fault${watch.firstLoss === '' ? '' : ` (first: ${watch.firstLoss})`}`,
    );
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped with no fault`);
  },
};
