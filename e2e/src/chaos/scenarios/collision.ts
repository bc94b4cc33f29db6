// A user's Service that happens to carry the derived name of a later import must never be
// modified or deleted; the import says why it is blocked.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1Service } from '@kubernetes/client-node';
import { derivedServiceName } from '@cloudmap-mcs/core';
import { deleteServiceExport, eventsAbout, exportService, podIps, serviceImport } from '../kube.js';
import { fastPeriodS } from '../profile.js';
import { seconds, type Scenario } from '../scenario.js';
import { waitImported } from '../watch.js';
import { waitFor } from '../../wait.js';
import { statusOf } from '../../resources.js';

const fingerprint = (s: V1Service): string =>
  JSON.stringify({
    rv: s.metadata?.resourceVersion,
    labels: s.metadata?.labels ?? {},
    owners: s.metadata?.ownerReferences ?? [],
    ports: s.spec?.ports,
    selector: s.spec?.selector,
    clusterIPs: s.spec?.clusterIPs,
  });

export const userServiceCollision: Scenario = {
  id: 'user-service-collision',
  fault:
    "a user's own Service in c2 already has the derived name of an import c1 then exports, and unexports",
  expected:
    'the user Service is never modified nor deleted; the import in c2 reports the collision (condition or Event)',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const [c1, c2] = [ctx.cluster(0), ctx.cluster(1)];
    const derived = derivedServiceName(ns, 'web');
    const core = c2.kc.makeApiClient(CoreV1Api);
    const mine = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: derived, labels: { owner: 'user' } },
        spec: { selector: { app: 'mine' }, ports: [{ name: 'mine', port: 9999, protocol: 'TCP' }] },
      },
    });
    const original = fingerprint(mine);
    const ips = podIps(1, 2);
    await exportService(c1, ns, 'web', ips);
    const exporter = ctx.agent('export', c1);
    await exporter.start();
    await waitFor(
      'web written to Cloud Map',
      async () => (await ctx.records.instances(ns, 'web')).length === 3,
      {
        timeoutMs: 60_000,
      },
    );
    await ctx.importers();
    // c1 has no colliding Service: its import shows the export was seen and processed.
    await waitImported([c1], ns, 'web', c1.name, ips, ctx.profile.setupTimeoutS * 1000);
    await sleep((fastPeriodS(ctx.profile) + 3) * 1000);
    const during = fingerprint(await core.readNamespacedService({ namespace: ns, name: derived }));
    const si = await serviceImport(c2, ns, 'web');
    const saying = [
      ...(si?.status?.conditions ?? [])
        .filter(
          (c) => c.status !== 'True' && `${c.reason ?? ''} ${c.message ?? ''}`.includes(derived),
        )
        .map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`),
      ...(await eventsAbout(c2, ns, 'web')).filter((e) => e.includes(derived)),
    ];
    await deleteServiceExport(c1, ns, 'web');
    const unexportedAt = Date.now();
    await waitFor(
      'import gone in c1',
      async () => (await serviceImport(c1, ns, 'web')) === undefined,
      { timeoutMs: 120_000 },
    );
    await sleep((fastPeriodS(ctx.profile) + 3) * 1000);
    let after = 'deleted';
    try {
      after = fingerprint(await core.readNamespacedService({ namespace: ns, name: derived }));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    out.figure('user Service modified', during !== original ? 'yes' : 'no');
    out.figure(
      'user Service after unexport',
      after === 'deleted' ? 'deleted' : after === original ? 'unchanged' : 'modified',
    );
    out.figure('collision reported', saying.length > 0 ? 'yes' : 'no');
    out.figure('observed for s', seconds(Date.now() - unexportedAt));
    out.observe(
      `while imported: ${during === original ? 'untouched' : 'modified'}; after unexport: ${after === 'deleted' ? 'deleted' : after === original ? 'untouched' : 'modified'}; reported: ${saying[0] ?? 'nothing'}`,
    );
    out.check(during === original, 'the user Service was modified while the import existed');
    out.check(
      after === original,
      `the user Service was ${after === 'deleted' ? 'deleted' : 'modified'} at unexport`,
    );
    out.check(saying.length > 0, 'the import in c2 does not say why it is blocked');
  },
};
