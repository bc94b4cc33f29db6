// Cloud Map outages: everywhere (the emulator's own outage), only for the importing side, and
// only for the exporting side (a cut proxy in front of the emulator for those agents).
import { setTimeout as sleep } from 'node:timers/promises';
import { fastPeriodS, heartbeatPeriodS } from '../profile.js';
import { podIps, setEndpoints } from '../kube.js';
import { auditInstances } from '../records.js';
import { seconds, type Scenario } from '../scenario.js';
import { ImportWatch, waitImported } from '../watch.js';
import { change, convergeBoundMs, oneExport } from './setup.js';
import { evictionTimes } from './eviction.js';

export const cloudMapOutage: Scenario = {
  id: 'cloudmap-outage',
  fault:
    'Cloud Map unavailable for every agent (emulator outage, 503), longer than the heartbeat TTL',
  expected:
    'no import loses an endpoint; a change made as it lifts arrives within one fast poll period (plus the control latency)',
  async run(ctx, out) {
    const p = ctx.profile;
    const s = await oneExport(ctx);
    out.figure('outage s', p.outageS);
    out.figure('TTL s', p.import.ttlS);
    const watch = new ImportWatch(ctx.clusters, s.ns);
    await watch.start();
    await ctx.admin.outage('unavailable');
    await sleep(p.outageS * 1000);
    await ctx.admin.outage(false);
    const convergeMs = await change(ctx, s, podIps(1, 5), (p.outageS + 120) * 1000);
    await watch.stop();
    const bound = convergeBoundMs(ctx, s.controlMs);
    out.figure('endpoints served', watch.baseline);
    out.figure('endpoints lost', watch.lost);
    out.figure('converge s', seconds(convergeMs));
    out.figure('control s', seconds(s.controlMs));
    out.observe(`${watch.lost} of ${watch.baseline} imported endpoints dropped during the outage`);
    out.observe(
      `change after the lift imported in ${seconds(convergeMs)} s (bound ${seconds(bound)} s)`,
    );
    out.check(watch.lost === 0, `${watch.lost} endpoints dropped during the outage`);
    out.check(convergeMs <= bound, `converged in ${seconds(convergeMs)} s > ${seconds(bound)} s`);
  },
};

export const importerOutage: Scenario = {
  id: 'importer-outage',
  fault:
    'Cloud Map unreachable from the import agents only (cut proxy), 2 × TTL; the exporter keeps heartbeating and changes endpoints meanwhile',
  expected:
    'no import loses an endpoint; the change made during the cut is imported within one fast poll period of the lift',
  async run(ctx, out) {
    const p = ctx.profile;
    const proxy = await ctx.proxy();
    const s = await oneExport(ctx, { importerUrl: proxy.url });
    const cutS = 2 * p.import.ttlS + 10;
    out.figure('cut s', cutS);
    out.figure('TTL s', p.import.ttlS);
    const watch = new ImportWatch(ctx.clusters, s.ns);
    await watch.start();
    proxy.cut(true);
    await sleep((cutS * 1000) / 2);
    const changed = podIps(1, 5);
    await setEndpoints(ctx.cluster(0), s.ns, s.service, changed);
    await sleep((cutS * 1000) / 2);
    proxy.cut(false);
    const liftedAt = Date.now();
    await waitImported(
      ctx.clusters,
      s.ns,
      s.service,
      ctx.cluster(0).name,
      changed,
      (cutS + 120) * 1000,
    );
    const convergeMs = Date.now() - liftedAt;
    await watch.stop();
    const bound = (fastPeriodS(p) + p.slackS) * 1000;
    out.figure('calls refused by the cut', proxy.refused);
    out.figure('endpoints lost', watch.lost);
    out.figure('converge s', seconds(convergeMs));
    out.observe(`${watch.lost} of ${watch.baseline} imported endpoints dropped during the cut`);
    out.observe(
      `the change made during the cut imported ${seconds(convergeMs)} s after the lift (bound ${seconds(bound)} s)`,
    );
    out.check(
      proxy.refused > 0,
      'the import agents made no call during the cut (the fault did not happen)',
    );
    out.check(
      watch.lost === 0,
      `${watch.lost} endpoints dropped while only the importer was blind`,
    );
    out.check(
      convergeMs <= bound,
      `converged ${seconds(convergeMs)} s after the lift > ${seconds(bound)} s`,
    );
  },
};

export const exporterOutage: Scenario = {
  id: 'exporter-outage',
  fault: 'Cloud Map unreachable from the export agent only (cut proxy), 2 × TTL',
  expected:
    'its endpoints stay until its last heartbeat is TTL old, not before, go within one fast poll period after; they come back after the lift, exactly once in Cloud Map',
  async run(ctx, out) {
    const p = ctx.profile;
    const proxy = await ctx.proxy();
    const s = await oneExport(ctx, { exporterUrl: proxy.url });
    const cutS = 2 * p.import.ttlS + 10;
    out.figure('cut s', cutS);
    const c1 = ctx.cluster(0).name;
    const times = await evictionTimes(ctx, s, out, async () => proxy.cut(true));
    const rest = cutS * 1000 - (Date.now() - times.faultAt);
    if (rest > 0) await sleep(rest);
    proxy.cut(false);
    const liftedAt = Date.now();
    await waitImported(
      ctx.clusters,
      s.ns,
      s.service,
      c1,
      s.ips,
      (p.export.heartbeatS + 120) * 1000,
    );
    const backMs = Date.now() - liftedAt;
    const bound = (p.export.heartbeatS / 3 + heartbeatPeriodS(p) + p.slackS) * 1000;
    out.figure('back s', seconds(backMs));
    out.observe(
      `back in every cluster ${seconds(backMs)} s after the lift (bound ${seconds(bound)} s)`,
    );
    out.check(
      backMs <= bound,
      `endpoints back ${seconds(backMs)} s after the lift > ${seconds(bound)} s`,
    );
    const audit = auditInstances(await ctx.records.instances(s.ns, s.service), c1, s.ips);
    out.figure('duplicates', audit.duplicates.length);
    out.figure('orphans', audit.orphans.length);
    out.check(
      audit.duplicates.length + audit.orphans.length + audit.missing.length === 0 &&
        audit.exportRecords === 1,
      `Cloud Map records not exact after the lift: ${JSON.stringify({ ...audit, addresses: undefined })}`,
    );
  },
};
