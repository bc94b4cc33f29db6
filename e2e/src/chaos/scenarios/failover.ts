// Leader failover: two export-agent replicas of one cluster share a Lease; the leader is
// killed (kill -9). The standby must take over within the lease timing, and neither replica
// may write what the other already wrote.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import type { ChaosContext } from '../context.js';
import { exportService, podIps, setEndpoints } from '../kube.js';
import type { Profile } from '../profile.js';
import { auditInstances } from '../records.js';
import { seconds, type Scenario } from '../scenario.js';
import { waitFor } from '../../wait.js';

export const LEASE = 'chaos-export-agent';

/** An export-agent replica's flags for leader election on the scenario's Lease. */
export const replicaArgs = (p: Profile): string[] => [
  '--leader-elect=true',
  `--lease-name=${LEASE}`,
  `--lease-duration-seconds=${p.lease.durationS}`,
  `--renew-deadline-seconds=${p.lease.renewS}`,
  `--retry-period-seconds=${p.lease.retryS}`,
];

/** The Lease's namespace and the replica's name, as the downward API gives them in a Pod. */
export const replicaEnv = (ns: string, id: string): Record<string, string> => ({
  POD_NAMESPACE: ns,
  POD_NAME: id,
});

/**
 * Instance writes to the exported service's records. The change feed (ADR 0018) and the
 * heartbeat are written to services of their own: a new leader announces its feed epoch, and
 * every change is announced there too, by design; neither is a repeated record write.
 */
const writes = (ctx: ChaosContext, ns: string): Promise<number> =>
  ctx.records.instanceWrites(ns, 'web');

/** The Lease as c1's API server has it (read directly, never through a scenario's proxy). */
export async function readLease(ctx: ChaosContext, ns: string): Promise<V1Lease | undefined> {
  try {
    return await ctx
      .cluster(0)
      .kc.makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: ns, name: LEASE });
  } catch {
    return undefined;
  }
}

export async function holder(ctx: ChaosContext, ns: string): Promise<string | undefined> {
  return (await readLease(ctx, ns))?.spec?.holderIdentity ?? undefined;
}

export const leaderFailover: Scenario = {
  id: 'leader-failover',
  fault: 'two export-agent replicas (leader election); the leader is killed (kill -9)',
  expected:
    'the standby leads within lease duration + retry period; no writes while standing by, none repeated at takeover; a later change written exactly once',
  async run(ctx, out) {
    const p = ctx.profile;
    const ns = await ctx.namespace();
    const c1 = ctx.cluster(0);
    let ips = podIps(1, 3);
    await exportService(c1, ns, 'web', ips);
    const args = replicaArgs(p);
    const replicas = new Map(
      ['replica-a', 'replica-b'].map((id) => [
        id,
        ctx.agent('export', c1, {
          name: id,
          args,
          env: replicaEnv(ns, id),
          // No heartbeat renewal inside the measured windows: any write there is a double write.
          timings: { heartbeatSeconds: 3600 },
        }),
      ]),
    );
    for (const r of replicas.values()) await r.start();
    const exact = async () => {
      const a = auditInstances(await ctx.records.instances(ns, 'web'), c1.name, ips);
      return (
        a.exportRecords === 1 && a.missing.length + a.orphans.length + a.duplicates.length === 0
      );
    };
    await waitFor('first export written', exact, { timeoutMs: 120_000, intervalMs: 500 });
    const leader = await waitFor('a leader', () => holder(ctx, ns), { timeoutMs: 60_000 });
    const standbyId = [...replicas.keys()].find((k) => k !== leader);
    if (standbyId === undefined || !replicas.has(leader))
      throw new Error(`unexpected lease holder ${leader}`);
    // Quiet window with both running and nothing changed.
    let w0 = await writes(ctx, ns);
    await sleep(2 * p.lease.renewS * 1000);
    const standbyWrites = (await writes(ctx, ns)) - w0;
    w0 = await writes(ctx, ns);
    const killedAt = Date.now();
    await replicas.get(leader)?.kill9();
    await waitFor(`${standbyId} leads`, async () => (await holder(ctx, ns)) === standbyId, {
      timeoutMs: (p.lease.durationS * 4 + 30) * 1000,
      intervalMs: 100,
    });
    const handoverMs = Date.now() - killedAt;
    await sleep((p.export.resyncS + 3) * 1000); // the new leader's start-up sync and one resync
    const takeoverWrites = (await writes(ctx, ns)) - w0;
    const before = await ctx.records.instances(ns, 'web');
    w0 = await writes(ctx, ns);
    ips = podIps(1, 4);
    await setEndpoints(c1, ns, 'web', ips);
    await waitFor('change written', exact, { timeoutMs: 60_000, intervalMs: 250 });
    await sleep(3_000);
    const changeWrites = (await writes(ctx, ns)) - w0;
    const after = await ctx.records.instances(ns, 'web');
    const key = (i: { id: string; attributes: Record<string, string> }) =>
      `${i.id} ${JSON.stringify(i.attributes)}`;
    const was = new Set(before.map(key));
    const now = new Set(after.map(key));
    const diff =
      [...now].filter((k) => !was.has(k)).length +
      before.filter((i) => !after.some((a) => a.id === i.id)).length;
    const bound = (p.lease.durationS + p.lease.retryS + 2) * 1000;
    out.figure('lease s', p.lease.durationS);
    out.figure('handover s', seconds(handoverMs));
    out.figure('standby writes', standbyWrites);
    out.figure('takeover writes', takeoverWrites);
    out.figure('change writes', `${changeWrites} for ${diff} changed`);
    out.observe(
      `${standbyId} took over ${seconds(handoverMs)} s after the kill (bound ${seconds(bound)} s); ${standbyWrites} writes while standing by, ${takeoverWrites} at takeover, ${changeWrites} for a change of ${diff} instances`,
    );
    out.check(handoverMs <= bound, `handover took ${seconds(handoverMs)} s > ${seconds(bound)} s`);
    out.check(standbyWrites === 0, `${standbyWrites} writes with nothing changed while both ran`);
    out.check(takeoverWrites === 0, `${takeoverWrites} writes at takeover with nothing changed`);
    out.check(changeWrites === diff, `${changeWrites} writes for ${diff} changed instances`);
  },
};
