// The common start of the fault scenarios: one Service exported from c1 by a real export
// agent, imported by a real import agent in every cluster.
import type { ChaosAgent } from '../agent.js';
import type { ChaosContext } from '../context.js';
import { exportService, podIps, setEndpoints } from '../kube.js';
import { fastPeriodS } from '../profile.js';
import { auditInstances } from '../records.js';
import { waitImported } from '../watch.js';
import { waitFor } from '../../wait.js';

export interface OneExport {
  readonly ns: string;
  readonly service: string;
  readonly exporter: ChaosAgent;
  readonly importers: ChaosAgent[];
  /** The addresses exported now. */
  ips: string[];
  /** ms a change took to reach every cluster with no fault (the control measurement). */
  readonly controlMs: number;
}

export interface OneExportOptions {
  /** Cloud Map endpoints for the export agent and for the import agents (default: the emulator). */
  readonly exporterUrl?: string;
  readonly importerUrl?: string;
}

export async function oneExport(
  ctx: ChaosContext,
  opts: OneExportOptions = {},
): Promise<OneExport> {
  const ns = await ctx.namespace();
  const c1 = ctx.cluster(0);
  const service = 'web';
  const ips = podIps(1, 3);
  await exportService(c1, ns, service, ips);
  const exporter = ctx.agent('export', c1, {
    ...(opts.exporterUrl ? { cloudMapUrl: opts.exporterUrl } : {}),
  });
  await exporter.start();
  // Importers start once the records exist, so their first snapshot has them (no slow-poll wait).
  await waitFor(
    'the export written to Cloud Map',
    async () => {
      const a = auditInstances(await ctx.records.instances(ns, service), c1.name, ips);
      return a.exportRecords === 1 && a.missing.length === 0;
    },
    { timeoutMs: ctx.profile.setupTimeoutS * 1000, intervalMs: 500 },
  );
  const importers = ctx.clusters.map((c) =>
    ctx.agent('import', c, { ...(opts.importerUrl ? { cloudMapUrl: opts.importerUrl } : {}) }),
  );
  for (const i of importers) await i.start();
  await waitImported(ctx.clusters, ns, service, c1.name, ips, ctx.profile.setupTimeoutS * 1000);
  const setup: OneExport = { ns, service, exporter, importers, ips, controlMs: 0 };
  const controlIps = podIps(1, 4);
  const controlMs = await change(ctx, setup, controlIps, ctx.profile.setupTimeoutS * 1000);
  return { ...setup, ips: controlIps, controlMs };
}

/** Changes c1's endpoints and waits until every cluster imports them; ms taken. */
export async function change(
  ctx: ChaosContext,
  s: Pick<OneExport, 'ns' | 'service'> & { ips: string[] },
  ips: string[],
  timeoutMs: number,
): Promise<number> {
  const c1 = ctx.cluster(0);
  const started = Date.now();
  await setEndpoints(c1, s.ns, s.service, ips);
  s.ips = ips;
  await waitImported(ctx.clusters, s.ns, s.service, c1.name, ips, timeoutMs);
  return Date.now() - started;
}

/** The convergence bound after a fault lifts: the control latency plus one fast poll period plus slack. */
export const convergeBoundMs = (ctx: ChaosContext, controlMs: number): number =>
  controlMs + (fastPeriodS(ctx.profile) + ctx.profile.slackS) * 1000;
