// A leader that answers slowly: of two export-agent replicas of c1, the leader's connection to
// its kube-apiserver first turns slow (it must keep leading), then hangs (a stuck proxy or
// NAT: requests held open, never answered nor reset) while Cloud Map still works for it. It
// must notice by itself, stop writing, and let the standby lead; healed and restarted, it must
// come back as a standby.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosAgent } from '../agent.js';
import type { ChaosContext } from '../context.js';
import { exportService, podIps, setEndpoints } from '../kube.js';
import type { CuttableProxy } from '../proxy.js';
import { auditInstances } from '../records.js';
import { seconds, type Scenario } from '../scenario.js';
import type { HangingTcpProxy } from '../tcp-proxy.js';
import { waitFor } from '../../wait.js';
import { holder, readLease, replicaArgs, replicaEnv } from './failover.js';

/** The leader's heartbeat falls due every 2 s, so it has Cloud Map writes to stop. */
const HEARTBEAT_S = 2;
/**
 * A write the leader sent just before stepping down reaches the proxy a little after its log
 * line on a loaded machine; later than this counts as a write after losing.
 */
const IN_FLIGHT_MS = 200;

interface Replica {
  readonly id: string;
  readonly agent: ChaosAgent;
  /** Its way to c1's API server. */
  readonly kube: HangingTcpProxy;
  /** Its way to Cloud Map: counts its calls. */
  readonly cloudMap: CuttableProxy;
}

interface LeaseSeen {
  readonly at: number;
  readonly holder: string;
  readonly transitions: number;
}

/** Polls the Lease (directly, not through a replica's proxy) and keeps each version seen. */
function watchLease(ctx: ChaosContext, ns: string): { seen: LeaseSeen[]; stop(): Promise<void> } {
  const seen: LeaseSeen[] = [];
  let on = true;
  const loop = (async () => {
    let rv = '';
    while (on) {
      const l = await readLease(ctx, ns);
      const v = l?.metadata?.resourceVersion ?? '';
      if (l !== undefined && v !== rv) {
        rv = v;
        seen.push({
          at: Date.now(),
          holder: l.spec?.holderIdentity ?? '',
          transitions: l.spec?.leaseTransitions ?? 0,
        });
      }
      await sleep(100);
    }
  })();
  return {
    seen,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/** When the agent (since its latest start) logged `message` first (ms), or undefined. */
function loggedAt(a: ChaosAgent, message: string): number | undefined {
  const lines = a.log().split('\n');
  const start = lines.findLastIndex((l) => l.startsWith('--- start'));
  for (const line of lines.slice(start + 1)) {
    try {
      const o = JSON.parse(line) as { message?: string; timestamp?: string };
      if (o.message === message && o.timestamp !== undefined) return Date.parse(o.timestamp);
    } catch {
      // Not a log object (the agent's own stderr, a start line).
    }
  }
  return undefined;
}

export const leaderSlowApiserver: Scenario = {
  id: 'leader-slow-apiserver',
  fault: `two export-agent replicas of c1 (leader election, heartbeat every ${String(HEARTBEAT_S)} s); the leader's connection to its kube-apiserver (through a TCP proxy) is first slow (every byte (renew deadline - retry period)/6 late, for 2 lease durations), then hangs (held open, never answered nor reset) while Cloud Map still works for it; healed after the takeover and the old replica restarted`,
  expected:
    'slow, the leader keeps the Lease and writes a change; hung, it stops leading within renew deadline + retry period of the hang and makes no Cloud Map write after; the standby leads within lease duration + retry period of the last renewal, only after the old one stopped; a change made after the takeover is written exactly once; healed, the old replica stands by (the Lease stays with the new leader)',
  async run(ctx, out) {
    const p = ctx.profile;
    const ns = await ctx.namespace();
    const c1 = ctx.cluster(0);
    let ips = podIps(1, 3);
    await exportService(c1, ns, 'web', ips);
    const replicas: Replica[] = [];
    for (const id of ['replica-a', 'replica-b']) {
      const { proxy: kube, kubeconfig } = await ctx.kubeProxy(c1, id);
      const cloudMap = await ctx.proxy();
      const agent = ctx.agent('export', c1, {
        name: id,
        args: replicaArgs(p),
        env: replicaEnv(ns, id),
        timings: { heartbeatSeconds: HEARTBEAT_S },
        cloudMapUrl: cloudMap.url,
        kubeconfig,
      });
      replicas.push({ id, agent, kube, cloudMap });
    }
    for (const r of replicas) await r.agent.start();
    const exact = async () => {
      const a = auditInstances(await ctx.records.instances(ns, 'web'), c1.name, ips);
      return (
        a.exportRecords === 1 && a.missing.length + a.orphans.length + a.duplicates.length === 0
      );
    };
    await waitFor('first export written', exact, { timeoutMs: 120_000, intervalMs: 500 });
    const leaderId = await waitFor('a leader', () => holder(ctx, ns), { timeoutMs: 60_000 });
    const old = replicas.find((r) => r.id === leaderId);
    const next = replicas.find((r) => r.id !== leaderId);
    if (old === undefined || next === undefined) throw new Error(`unexpected holder ${leaderId}`);
    const lease = watchLease(ctx, ns);
    await sleep(2 * p.lease.retryS * 1000); // a few renewals seen before the fault

    // Slow first, not hung: every byte to and from its API server late, so a renewal (on a new
    // connection: TLS handshake and request, four crossings) still ends well inside the renew
    // deadline. It must go on leading and writing.
    const slowMs = Math.round(((p.lease.renewS - p.lease.retryS) * 1000) / 6);
    old.kube.delay(slowMs);
    const slowAt = Date.now();
    ips = podIps(1, 4);
    await setEndpoints(c1, ns, 'web', ips);
    await waitFor('change written while slow', exact, { timeoutMs: 60_000, intervalMs: 100 });
    const slowChangeMs = Date.now() - slowAt;
    await sleep(Math.max(0, 2 * p.lease.durationS * 1000 - slowChangeMs));
    old.kube.delay(0);
    const slowSeen = lease.seen.filter((v) => v.at >= slowAt);
    const slowHolders = new Set(slowSeen.map((v) => v.holder));
    const times = [slowAt, ...slowSeen.map((v) => v.at), Date.now()];
    const slowGapMs = Math.max(...times.slice(1).map((t, i) => t - (times[i] ?? t)));
    const lostWhileSlow = loggedAt(old.agent, 'leadership lost') !== undefined;

    const before = await ctx.records.instances(ns, 'web');
    const w0 = await ctx.records.instanceWrites(ns, 'web');

    const holeAt = Date.now();
    old.kube.blackHole(true);
    // The takeover as the Lease watch saw it (the times it measures from are its own too).
    const takeover = await waitFor(
      `${next.id} leads`,
      () => lease.seen.find((s) => s.holder === next.id),
      { timeoutMs: (p.lease.durationS * 4 + 30) * 1000, intervalMs: 50 },
    );
    const lastRenewal = lease.seen.filter((s) => s.holder === old.id).at(-1);
    // Never stopping is the failure this scenario looks for: a check, not an abort.
    const stoppedAt =
      (await waitFor('the old leader logs it stopped', async () =>
        loggedAt(old.agent, 'leadership lost'),
      ).catch(() => undefined)) ?? Infinity;
    const startedAt = await waitFor('the new leader logs it started', async () =>
      loggedAt(next.agent, 'started leading'),
    );
    // A change after the takeover; the window also covers the new leader's start-up sync.
    const changeAt = Date.now();
    ips = podIps(1, 5);
    await setEndpoints(c1, ns, 'web', ips);
    await waitFor('change written', exact, { timeoutMs: 60_000, intervalMs: 100 });
    const changeMs = Date.now() - changeAt;
    await sleep(3_000);
    const changeWrites = (await ctx.records.instanceWrites(ns, 'web')) - w0;
    const after = await ctx.records.instances(ns, 'web');
    const key = (i: { id: string; attributes: Record<string, string> }) =>
      `${i.id} ${JSON.stringify(i.attributes)}`;
    const was = new Set(before.map(key));
    const diff =
      after.filter((i) => !was.has(key(i))).length +
      before.filter((i) => !after.some((a) => a.id === i.id)).length;
    const oldWritesInHole = old.cloudMap.writes(holeAt).filter((c) => c.at < stoppedAt).length;
    const oldWritesAfter = old.cloudMap.writes(stoppedAt + IN_FLIGHT_MS).length;
    const oldLastWrite = old.cloudMap.writes().at(-1)?.at ?? 0;
    const nextEarlyWrites = next.cloudMap.writes().filter((c) => c.at < startedAt).length;
    await waitFor(`${old.id} exits`, async () => !old.agent.running, { timeoutMs: 45_000 });
    const exitedMs = (loggedAt(old.agent, 'shutdown complete') ?? Date.now()) - stoppedAt;

    // Healed: the old replica restarts (as its Deployment would) and must stand by.
    old.kube.blackHole(false);
    await old.agent.start();
    const restartedAt = Date.now();
    await sleep((2 * p.lease.durationS + 2 * p.lease.retryS) * 1000);
    await lease.stop();
    const afterHeal = lease.seen.filter((s) => s.at >= restartedAt);
    const holders = new Set(afterHeal.map((s) => s.holder).concat((await holder(ctx, ns)) ?? ''));
    const transitions = (await readLease(ctx, ns))?.spec?.leaseTransitions ?? -1;
    const oldLeadsAgain = loggedAt(old.agent, 'started leading') !== undefined;
    const nextLost = loggedAt(next.agent, 'leadership lost') !== undefined;
    const oldWritesAfterHeal = old.cloudMap.writes(restartedAt).length;
    const oldReady = (await old.agent.get('/readyz')).status;

    const stopMs = stoppedAt - holeAt;
    const renewedAt = lastRenewal?.at ?? holeAt;
    const takeoverMs = takeover.at - renewedAt;
    const stopBound = (p.lease.renewS + p.lease.retryS) * 1000;
    const takeoverBound = (p.lease.durationS + p.lease.retryS + 2) * 1000;
    out.figure('lease/renew/retry s', `${p.lease.durationS}/${p.lease.renewS}/${p.lease.retryS}`);
    out.figure('slow: one-way delay s', seconds(slowMs));
    out.figure('slow: longest renewal gap s', seconds(slowGapMs));
    out.figure('slow: change written s', seconds(slowChangeMs));
    out.figure('stop-leading s', seconds(stopMs));
    out.figure('stop-leading after last renewal s', seconds(stoppedAt - renewedAt));
    out.figure('takeover s', seconds(takeoverMs));
    out.figure('gap between leaders s', seconds(startedAt - stoppedAt));
    out.figure('old leader writes in the hang before losing', oldWritesInHole);
    out.figure('writes by old leader after losing', oldWritesAfter);
    out.figure('change propagation s', seconds(changeMs));
    out.figure('change writes', `${changeWrites} for ${diff} changed`);
    out.figure('old leader shut down s', seconds(exitedMs));
    out.figure('Lease holders after heal', [...holders].join(', '));
    out.observe(
      `${old.id} led; with its API server ${seconds(slowMs)} s late each way its renewals were at most ${seconds(slowGapMs)} s apart and it wrote a change in ${seconds(slowChangeMs)} s (Lease holders: ${[...slowHolders].join(', ')})`,
    );
    out.observe(
      `then its API server connection hung: it stopped leading ${seconds(stopMs)} s later (bound ${seconds(stopBound)} s; ${seconds(stoppedAt - renewedAt)} s after its last renewal seen), made ${oldWritesInHole} Cloud Map writes in between and ${oldWritesAfter} after, and its process ended ${seconds(exitedMs)} s after stopping`,
    );
    out.observe(
      `${next.id} took the Lease ${seconds(takeoverMs)} s after the last renewal (bound ${seconds(takeoverBound)} s), ${seconds(startedAt - stoppedAt)} s after ${old.id} stopped; a change then reached Cloud Map in ${seconds(changeMs)} s with ${changeWrites} writes for ${diff} changed instances`,
    );
    out.observe(
      `healed and restarted, ${old.id} stood by for ${seconds(Date.now() - restartedAt)} s (/readyz ${oldReady}, ${oldWritesAfterHeal} Cloud Map writes); Lease holders seen: ${[...holders].join(', ')}, ${transitions} transitions`,
    );
    out.check(
      stopMs <= stopBound,
      `stopped leading ${seconds(stopMs)} s after the hang (or never)`,
    );
    out.check(
      slowHolders.size === 1 && slowHolders.has(old.id) && !lostWhileSlow,
      `slow, not hung, the leader lost the Lease (holders ${[...slowHolders].join(', ')})`,
    );
    // Its renewal was sent before the Lease changed: renew deadline after that, with 1 s for a
    // loaded machine's timers.
    out.check(
      stoppedAt - renewedAt <= (p.lease.renewS + 1) * 1000,
      `stopped leading ${seconds(stoppedAt - renewedAt)} s after its last renewal > renew deadline + 1 s`,
    );
    out.check(
      takeoverMs <= takeoverBound,
      `takeover ${seconds(takeoverMs)} s after the last renewal > ${seconds(takeoverBound)} s`,
    );
    out.check(startedAt > stoppedAt, 'the new leader started before the old one stopped');
    out.check(oldLastWrite < startedAt, `${old.id} wrote to Cloud Map after ${next.id} led`);
    out.check(oldWritesAfter === 0, `${oldWritesAfter} Cloud Map writes after losing the Lease`);
    out.check(nextEarlyWrites === 0, `${nextEarlyWrites} Cloud Map writes by the standby`);
    out.check(changeWrites === diff, `${changeWrites} writes for ${diff} changed instances`);
    out.check(
      holders.size === 1 && holders.has(next.id) && !oldLeadsAgain && !nextLost,
      `after the heal the Lease went to ${[...holders].join(', ')} (old leads again: ${String(oldLeadsAgain)})`,
    );
    out.check(
      transitions === takeover.transitions,
      `the Lease changed hands again after the takeover (${transitions} transitions)`,
    );
    out.check(oldWritesAfterHeal === 0, `${oldWritesAfterHeal} writes by the restarted replica`);
    out.check(oldReady === 200, `the restarted replica's /readyz answered ${oldReady}`);
  },
};
