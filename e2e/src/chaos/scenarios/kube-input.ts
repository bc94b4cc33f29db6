// Bad Kubernetes input on the export side: a ServiceExport that points at nothing or at an
// ExternalName Service, and an export over Cloud Map's limits (200 ports: more port attributes
// than an instance can carry). 1,500 endpoints used to be one too; since ADR 0015 such a Service
// exports completely over shard services (large-service.int.test.ts), so it is no bad input.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ChaosContext } from '../context.js';
import {
  createServiceExport,
  eventsAbout,
  exportService,
  podIps,
  serviceExportConditions,
} from '../kube.js';
import type { Outcome, Scenario } from '../scenario.js';
import { waitFor } from '../../wait.js';

async function writes(ctx: ChaosContext): Promise<number> {
  const ops = (await ctx.admin.stats()).operations;
  return (ops['RegisterInstance']?.calls ?? 0) + (ops['DeregisterInstance']?.calls ?? 0);
}

async function expectCondition(
  ctx: ChaosContext,
  out: Outcome,
  ns: string,
  name: string,
  type: string,
  want: string,
): Promise<void> {
  const got = await waitFor(
    `${name} ${type}=${want}`,
    async () => {
      const conds = await serviceExportConditions(ctx.cluster(0), ns, name);
      return conds[type] === want ? conds : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch(async () => serviceExportConditions(ctx.cluster(0), ns, name));
  out.check(got[type] === want, `${name}: ${type} is ${got[type] ?? 'unset'}, expected ${want}`);
}

export const badServiceExports: Scenario = {
  id: 'bad-serviceexports',
  fault: 'ServiceExports with no Service, of an ExternalName Service and of 200 ports',
  expected:
    'each gets its condition (NoService, InvalidServiceType, Failed with the limit) and a Warning Event; no instance written for any of them',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const c1 = ctx.cluster(0);
    const exporter = ctx.agent('export', c1);
    await exporter.start();
    const w0 = await writes(ctx);
    await createServiceExport(c1, ns, 'nothing');
    await c1.kc.makeApiClient(CoreV1Api).createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'elsewhere' },
        spec: { type: 'ExternalName', externalName: 'example.com' },
      },
    });
    await createServiceExport(c1, ns, 'elsewhere');
    await exportService(c1, ns, 'ports', podIps(1, 2), { ports: 200 });
    await expectCondition(ctx, out, ns, 'nothing', 'Valid', 'False/NoService');
    await expectCondition(ctx, out, ns, 'elsewhere', 'Valid', 'False/InvalidServiceType');
    await expectCondition(ctx, out, ns, 'ports', 'Ready', 'False/Failed');
    await sleep((ctx.profile.export.resyncS + 2) * 1000); // one resync: still nothing written
    const warnings = (await eventsAbout(c1, ns, 'ports')).filter((e) => e.startsWith('Warning'));
    out.check(warnings.length > 0, 'ports: no Warning Event');
    const written = (await writes(ctx)) - w0;
    let instances = 0;
    for (const name of ['nothing', 'elsewhere', 'ports'])
      instances += (await ctx.records.instances(ns, name)).length;
    out.figure('instances written', instances);
    out.figure('Register/Deregister calls', written);
    out.observe(
      `${instances} instances in Cloud Map for the 3 bad exports (${written} write calls, heartbeats included)`,
    );
    out.check(instances === 0, `${instances} instances written for bad exports`);
    out.check(exporter.running, 'the export agent exited');
  },
};

export const exportFailureEvents: Scenario = {
  id: 'export-failure-events',
  fault: 'an export that cannot be written (200 ports) stays so across several resyncs',
  expected:
    'exactly one Warning Event for the failure, not one per reconcile or per replica of the same reason',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const c1 = ctx.cluster(0);
    const exporter = ctx.agent('export', c1);
    await exporter.start();
    await exportService(c1, ns, 'ports', podIps(1, 2), { ports: 200 });
    await expectCondition(ctx, out, ns, 'ports', 'Ready', 'False/Failed');
    await sleep((2 * ctx.profile.export.resyncS + 2) * 1000);
    const warnings = (await eventsAbout(c1, ns, 'ports')).filter((e) => e.startsWith('Warning'));
    const distinct = new Set(warnings).size;
    out.figure('Warning Events', warnings.length);
    out.figure('distinct', distinct);
    out.observe(`${warnings.length} Warning Events (${distinct} distinct) after 2 resyncs`);
    out.check(
      warnings.length === distinct && warnings.length >= 1,
      `${warnings.length} Warning Events for ${distinct} distinct failures`,
    );
  },
};
