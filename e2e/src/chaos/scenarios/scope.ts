// What Cloud Map may make an importing cluster create: nothing in the system namespaces,
// nothing under a name Kubernetes (or the MCS API) would refuse, and not without limit.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ChaosContext } from '../context.js';
import { SI } from '../kube.js';
import type { Scenario } from '../scenario.js';
import { controlSeen, hostileInstances, refused, writeAll } from './hostile.js';

const DENIED = ['kube-system', 'kube-public', 'kube-node-lease', 'default'];

/** ServiceImports made by the import agent in a namespace of every cluster. */
async function importsIn(ctx: ChaosContext, ns: string): Promise<string[]> {
  const out: string[] = [];
  for (const c of ctx.clusters) {
    const list = (await c.kc
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ ...SI, namespace: ns })) as {
      items: { metadata: { name: string } }[];
    };
    out.push(...list.items.map((i) => `${c.name}:${ns}/${i.metadata.name}`));
  }
  return out;
}

/** Removes every record the scenario wrote in `ns` (and what an import agent made of it). */
async function scrub(ctx: ChaosContext, ns: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const id = await ctx.records.serviceId(ns, name);
    if (id === undefined) continue;
    for (const i of await ctx.records.cm.listInstances(id))
      await ctx.records.cm.deregisterInstance(id, i.id).catch(() => undefined);
  }
  // An import agent that did create something there is gone by now: delete its leftovers.
  for (const c of ctx.clusters) {
    const custom = c.kc.makeApiClient(CustomObjectsApi);
    for (const name of names)
      await custom
        .deleteNamespacedCustomObject({ ...SI, namespace: ns, name })
        .catch(() => undefined);
    const core = c.kc.makeApiClient(CoreV1Api);
    const svcs = await core.listNamespacedService({
      namespace: ns,
      labelSelector: 'app.kubernetes.io/managed-by=cloudmap-mcs-import-agent',
    });
    for (const s of svcs.items)
      await core
        .deleteNamespacedService({ namespace: ns, name: s.metadata?.name ?? '' })
        .catch(() => undefined);
  }
}

export const deniedNamespaces: Scenario = {
  id: 'hostile-system-namespaces',
  fault:
    'Cloud Map services written into kube-system, kube-public, kube-node-lease and default (one named `kubernetes`), with a live heartbeat',
  expected:
    'no ServiceImport or Service created in any of them (default namespace policy), refusals counted; an ordinary namespace still imports',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const per = Math.max(1, Math.floor(ctx.profile.hostileServices / DENIED.length / 10));
    const names = ['kubernetes', ...Array.from({ length: per }, (_, k) => `planted-${String(k)}`)];
    try {
      for (const target of DENIED) {
        await ctx.keepAlive(target, 'c9');
        for (const name of names)
          await writeAll(ctx, target, name, hostileInstances(target, name, 'c9', []));
      }
      await ctx.keepAlive(ns, 'c9');
      await writeAll(ctx, ns, 'fine', hostileInstances(ns, 'fine', 'c9', []));
      // Started after the records exist: the first snapshot lists every namespace.
      const importers = await ctx.importers();
      await controlSeen(ctx, ns, 'fine', 'c9'); // a full listing of every namespace
      const planted = (await Promise.all(DENIED.map((d) => importsIn(ctx, d)))).flat();
      const counted = await refused(importers);
      out.figure('services planted', DENIED.length * names.length);
      out.figure('imports created', planted.length);
      out.figure('refusals counted', counted);
      out.observe(
        planted.length === 0
          ? 'no import in a system namespace'
          : `created ${planted.slice(0, 6).join(', ')}${planted.length > 6 ? ', …' : ''}`,
      );
      out.check(
        planted.length === 0,
        `${planted.length} ServiceImports created in system namespaces`,
      );
      out.check(counted > 0, 'no refusal counted');
    } finally {
      for (const target of DENIED) await scrub(ctx, target, names);
    }
  },
};

export const importCap: Scenario = {
  id: 'hostile-import-flood',
  fault:
    'N hostile Cloud Map services written into one ordinary namespace at once (import agents with --max-imports-per-namespace N/2)',
  expected: 'exactly N/2 imports per cluster, the rest refused and counted',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const n = ctx.profile.hostileServices;
    await ctx.keepAlive(ns, 'c9');
    for (let k = 0; k < n; k++) {
      const name = `flood-${String(k).padStart(3, '0')}`;
      await writeAll(ctx, ns, name, hostileInstances(ns, name, 'c9', []));
    }
    const cap = Math.floor(n / 2);
    const started = Date.now();
    // The default cap (1,000 per namespace) sits above any flood a test can write quickly: the
    // scenario sets its own, as an operator expecting few services would.
    const importers = await ctx.importers([`--max-imports-per-namespace=${String(cap)}`]);
    // Until the number of imports has not moved for 5 s.
    let made: string[] = [];
    for (let stable = 0; stable < 5 && Date.now() - started < 180_000;) {
      await sleep(1_000);
      const now = await importsIn(ctx, ns);
      stable = now.length === made.length ? stable + 1 : 0;
      made = now;
    }
    const perCluster = made.length / ctx.clusters.length;
    const counted = await refused(importers);
    out.figure('services written', n);
    out.figure('imports per cluster', perCluster);
    out.figure('refusals counted', counted);
    out.figure('elapsed s', Math.round((Date.now() - started) / 1000));
    out.observe(`${perCluster} of ${n} services imported per cluster`);
    out.figure('cap', cap);
    out.check(
      perCluster === cap,
      `${perCluster} of ${n} hostile services became imports (cap ${cap})`,
    );
    out.check(counted > 0, 'no refusal counted');
  },
};

export const invalidServiceNames: Scenario = {
  id: 'hostile-service-names',
  fault:
    'Cloud Map services named `Evil_Name` and `_underscore` (not DNS labels) with valid records',
  expected:
    'no import, a counted refusal, no reconcile error loop; a valid service next to them imported',
  async run(ctx, out) {
    const ns = await ctx.namespace();
    await ctx.keepAlive(ns, 'c9');
    for (const name of ['Evil_Name', '_underscore'])
      await writeAll(ctx, ns, name, hostileInstances(ns, name, 'c9', []));
    await writeAll(ctx, ns, 'fine', hostileInstances(ns, 'fine', 'c9', []));
    const importers = await ctx.importers();
    await controlSeen(ctx, ns, 'fine', 'c9');
    const errors = async () => {
      let n = 0;
      for (const a of importers) n += await a.metric('mcs_reconcile_total', 'result="error"');
      return n;
    };
    const e0 = await errors();
    await sleep(10_000);
    const errorsIn10s = (await errors()) - e0;
    const counted = await refused(importers);
    const made = (await importsIn(ctx, ns)).filter((i) => !i.endsWith('/fine'));
    out.figure('reconcile errors in 10 s', errorsIn10s);
    out.figure('refusals counted', counted);
    out.figure('imports created', made.length);
    out.observe(
      `${errorsIn10s} reconcile errors in 10 s, ${counted} refusals counted, ${made.length} bad imports`,
    );
    out.check(errorsIn10s === 0, `${errorsIn10s} reconcile errors in 10 s (an error loop)`);
    out.check(counted > 0, 'no refusal counted');
    out.check(made.length === 0, `imports created: ${made.join(', ')}`);
  },
};
