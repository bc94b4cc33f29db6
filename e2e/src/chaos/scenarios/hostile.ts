// Hostile Cloud Map records: whoever can write Cloud Map must not be able to make an
// importing cluster send traffic to its metadata service, itself or its nodes, pose as
// another cluster, or keep endpoints alive without a heartbeat. Each scenario writes a
// legitimate control endpoint next to the hostile ones: once the control is imported
// everywhere (and one more fast poll period has passed) the hostile ones were seen and must
// be absent.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Attr,
  encodeClusterExport,
  type CloudMapInstance,
  type ServiceProperties,
} from '@cloudmap-mcs/core';
import type { ChaosAgent } from '../agent.js';
import type { ChaosContext } from '../context.js';
import { importView, serviceImport, type ChaosCluster } from '../kube.js';
import { fastPeriodS, heartbeatPeriodS } from '../profile.js';
import { seconds, type Outcome, type Scenario } from '../scenario.js';
import { waitFor } from '../../wait.js';

export const CLUSTERSET = 'e2e-clusterset';
const CONTROL_V4 = '10.9.0.1';
const CONTROL_V6 = 'fd12::10';

export const props = (over: Partial<ServiceProperties> = {}): ServiceProperties => ({
  type: 'ClusterSetIP',
  ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
  sessionAffinity: 'None',
  ipFamilies: ['IPv4'],
  exportedLabels: {},
  exportedAnnotations: {},
  exportCreatedAtMs: Date.now(),
  ...over,
});

/**
 * The records of one cluster's export of `name`: the export record, the control endpoint(s)
 * and one endpoint instance per hostile address (a copy of the control's attributes with the
 * address replaced; the codec itself would not write them).
 */
export function hostileInstances(
  ns: string,
  name: string,
  clusterId: string,
  addresses: readonly string[],
  over: Partial<ServiceProperties> = {},
  controls: readonly string[] = [CONTROL_V4],
): CloudMapInstance[] {
  const { instances } = encodeClusterExport({
    namespace: ns,
    name,
    cluster: { clusterId, clustersetId: CLUSTERSET },
    properties: props(over),
    endpoints: controls.map((address) => ({
      address,
      addressType: address.includes(':') ? ('IPv6' as const) : ('IPv4' as const),
      ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
      conditions: { ready: true, serving: true, terminating: false },
    })),
    hasExportRecord: true,
  });
  const template = instances.find((i) => i.attributes[Attr.Record] === 'endpoint');
  if (template === undefined) throw new Error('no endpoint instance to copy');
  const hostile = addresses.map((address, k) => {
    const attributes = { ...template.attributes };
    delete attributes[Attr.Ipv4];
    delete attributes[Attr.Ipv6];
    attributes[address.includes(':') ? Attr.Ipv6 : Attr.Ipv4] = address;
    return { id: `hostile-${String(k)}`, attributes };
  });
  return [...instances, ...hostile];
}

export async function writeAll(
  ctx: ChaosContext,
  ns: string,
  name: string,
  instances: readonly CloudMapInstance[],
): Promise<void> {
  for (const i of instances) await ctx.records.register(ns, name, i.id, i.attributes);
}

/** Sum over the import agents of their refusal counter. */
export async function refused(importers: readonly ChaosAgent[]): Promise<number> {
  let n = 0;
  for (const a of importers) n += await a.metric('mcs_import_refused_records_total');
  return n;
}

/** Waits for the control endpoint from `source` in every cluster, then one more fast poll period. */
export async function controlSeen(
  ctx: ChaosContext,
  ns: string,
  name: string,
  source: string,
  controls: readonly string[] = [CONTROL_V4],
): Promise<void> {
  let last: string[] = [];
  await waitFor(
    `control endpoints ${controls.join(', ')} of ${name} from ${source} imported everywhere`,
    async () => {
      last = [];
      for (const c of ctx.clusters) {
        const all = await importedAddresses(c, ns, name);
        last.push(`${c.name}: ${JSON.stringify(Object.fromEntries(all))}`);
        const got = new Set(all.get(source) ?? []);
        if (!controls.every((a) => got.has(a))) return false;
      }
      return true;
    },
    { timeoutMs: ctx.profile.setupTimeoutS * 1000, intervalMs: 250 },
  ).catch(async (err: unknown) => {
    const status = await Promise.all(
      ctx.clusters.map(async (c) => {
        const si = await serviceImport(c, ns, name);
        const ready = si?.status?.conditions?.find((x) => x.type === 'Ready');
        return `${c.name}: ${si === undefined ? 'no ServiceImport' : `Ready=${ready?.status ?? '?'}/${ready?.reason ?? ''} ${ready?.message ?? ''}`}`;
      }),
    );
    throw new Error(
      `${String(err)}; imported: ${last.join('; ').slice(0, 300)}; ${status.join('; ').slice(0, 400)}`,
    );
  });
  await sleep((fastPeriodS(ctx.profile) + 2) * 1000);
}

/** Addresses of `name` imported in cluster `c`, whatever their source cluster. */
export async function importedAddresses(
  c: ChaosCluster,
  ns: string,
  name: string,
): Promise<Map<string, string[]>> {
  return (await importView(c, ns)).endpoints.get(name) ?? new Map();
}

/** A hostile-address scenario: `addresses(c)` are refused in cluster `c` (all clusters: `common`). */
function addressScenario(
  id: string,
  fault: string,
  common: readonly string[],
  own: (c: ChaosCluster) => readonly string[],
  controls: readonly string[],
  /** Controls that are not waited for but must be imported too (a hostile record must not block them). */
  alsoControls: readonly string[] = [],
): Scenario {
  return {
    id,
    fault,
    expected:
      'none of them imported in any cluster (refused, counted in mcs_import_refused_records_total); the control endpoint next to them imported',
    async run(ctx, out) {
      const ns = await ctx.namespace();
      const evil = 'evil';
      const all = [...new Set([...common, ...ctx.clusters.flatMap((c) => own(c))])];
      await ctx.keepAlive(ns, evil);
      await writeAll(
        ctx,
        ns,
        'bait',
        hostileInstances(ns, 'bait', evil, all, {}, [...controls, ...alsoControls]),
      );
      // Started after the records exist, so the first snapshot has them (no slow-poll wait).
      const importers = await ctx.importers();
      await controlSeen(ctx, ns, 'bait', evil, controls);
      await checkAbsent(ctx, out, ns, 'bait', (c) => [...common, ...own(c)], all.length);
      for (const c of ctx.clusters) {
        const got = new Set((await importedAddresses(c, ns, 'bait')).get(evil) ?? []);
        const blocked = alsoControls.filter((a) => !got.has(a));
        out.check(
          blocked.length === 0,
          `${blocked.join(', ')} not imported in ${c.name}: the hostile records blocked a valid endpoint`,
        );
      }
      const counted = await refused(importers);
      out.figure('refusals counted', counted);
      out.check(counted > 0, 'no refusal counted');
    },
  };
}

async function checkAbsent(
  ctx: ChaosContext,
  out: Outcome,
  ns: string,
  name: string,
  forbidden: (c: ChaosCluster) => readonly string[],
  written: number,
): Promise<void> {
  let leaked: string[] = [];
  for (const c of ctx.clusters) {
    const got = new Set([...(await importedAddresses(c, ns, name)).values()].flat());
    leaked = [
      ...leaked,
      ...forbidden(c)
        .filter((a) => got.has(a))
        .map((a) => `${a} in ${c.name}`),
    ];
  }
  let total = 0;
  for (const c of ctx.clusters)
    for (const ips of (await importedAddresses(c, ns, name)).values()) total += ips.length;
  out.figure('hostile written', written);
  out.figure('endpoints imported', total);
  out.figure('hostile imported', leaked.length);
  out.observe(
    leaked.length === 0 ? `none of ${written} imported` : `imported: ${leaked.join(', ')}`,
  );
  out.check(leaked.length === 0, `imported ${leaked.join(', ')}`);
}

export const hostileAddressesV4 = addressScenario(
  'hostile-addresses-ipv4',
  'records with the metadata (169.254.169.254), link-local, loopback, unspecified, multicast and broadcast IPv4 addresses',
  [
    '169.254.169.254',
    '169.254.1.1',
    '127.0.0.1',
    '127.1.2.3',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
  ],
  () => [],
  [CONTROL_V4],
);

export const hostileAddressesV6 = addressScenario(
  'hostile-addresses-ipv6',
  'IPv6 loopback/unspecified/link-local/metadata (fd00:ec2::254) and IPv4-embedded forms of 169.254.169.254 and 127.0.0.1 (mapped, compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4)',
  [
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:169.254.169.254',
    '::ffff:127.0.0.1',
    '::a9fe:a9fe',
    '::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::7f00:1',
    '64:ff9b:1::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
  ],
  () => [],
  [CONTROL_V4, CONTROL_V6],
);

export const hostileNonCanonical = addressScenario(
  'hostile-noncanonical-address',
  'IPv6 addresses in non-canonical spellings (::127.0.0.1, upper case, zeros written out), which the API server refuses in an EndpointSlice',
  ['::127.0.0.1', '::FFFF:A9FE:A9FE', 'fd12:0:0:0:0:0:0:0011'],
  () => [],
  [CONTROL_V4],
  [CONTROL_V6],
);

/**
 * The harness's layout (e2e/src/network.ts): cluster i has services in 10.(100+i).0.0/16 and
 * nodes at 172.16.i.(k+1); with IPv6, services in fd00:10:(100+i)::/108 and nodes at
 * fd00:172:16:i::(k+1).
 */
const clusterIndex = (c: ChaosCluster): number => Number(c.name.replace(/^c/, ''));

export const hostileLocalAddresses = addressScenario(
  'hostile-local-addresses',
  "records pointing at the importing cluster's own Service IPs (its API server's 10.(100+i).0.1) and node IPs (172.16.i.1); with IPv6 its IPv6 Service IP (fd00:10:(100+i)::1), and in an IPv6-only cluster its IPv6 node IP (fd00:172:16:i::1) instead of the IPv4 ones",
  [],
  (c) => {
    const i = clusterIndex(c);
    const v4 = [`10.${String(100 + i)}.0.1`, `10.${String(100 + i)}.0.10`, `172.16.${String(i)}.1`];
    const v6Service = `fd00:10:${String(100 + i)}::1`;
    // Dual-stack fake nodes have IPv4 node addresses only (network.ts).
    switch (c.ipFamily ?? 'ipv4') {
      case 'ipv4':
        return v4;
      case 'dual':
        return [...v4, v6Service];
      case 'ipv6':
        return [v6Service, `fd00:172:16:${String(i)}::1`];
    }
  },
  [CONTROL_V4],
);

export const ownClusterId: Scenario = {
  id: 'hostile-own-cluster-id',
  fault:
    "records claiming the importing cluster's own cluster id (c2) for a Service c2 does not export",
  expected:
    "c2 imports no endpoint under its own name that it did not export; other clusters' records of the service still imported",
  async run(ctx, out) {
    const ns = await ctx.namespace();
    const victim = ctx.cluster(1);
    await ctx.keepAlive(ns, 'c9');
    await ctx.keepAlive(ns, victim.name);
    await writeAll(ctx, ns, 'claimed', hostileInstances(ns, 'claimed', 'c9', []));
    await writeAll(
      ctx,
      ns,
      'claimed',
      hostileInstances(ns, 'claimed', victim.name, [], {}, ['10.2.250.1', '10.2.250.2']),
    );
    await ctx.importers();
    await controlSeen(ctx, ns, 'claimed', 'c9');
    const got = (await importedAddresses(victim, ns, 'claimed')).get(victim.name) ?? [];
    out.figure('hostile written', 2);
    out.figure('imported as own', got.length);
    out.observe(
      got.length === 0
        ? `${victim.name} imported none of the records claiming to be it`
        : `${victim.name} imported ${got.join(', ')} as its own`,
    );
    out.check(
      got.length === 0,
      `${victim.name} imported ${String(got.length)} endpoints claiming its own id`,
    );
  },
};

export const ghostCluster: Scenario = {
  id: 'hostile-ghost-cluster',
  fault:
    'records (our schema, with an export record) of an unknown cluster that never wrote a heartbeat',
  expected:
    "not live forever: its endpoints go from every import within one TTL (+ one heartbeat check period) of the import agents first reading them; a live cluster's endpoints in the same service stay",
  async run(ctx, out) {
    const p = ctx.profile;
    const ns = await ctx.namespace();
    const n = p.name === 'long' ? 500 : 50;
    await ctx.keepAlive(ns, 'c9');
    const ghostIps = Array.from(
      { length: n },
      (_, k) => `10.77.${String(Math.floor(k / 250))}.${String((k % 250) + 1)}`,
    );
    const { instances } = encodeClusterExport({
      namespace: ns,
      name: 'haunted',
      cluster: { clusterId: 'ghost', clustersetId: CLUSTERSET },
      properties: props(),
      endpoints: ghostIps.map((address) => ({
        address,
        addressType: 'IPv4' as const,
        ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
        conditions: { ready: true, serving: true, terminating: false },
      })),
      hasExportRecord: true,
    });
    await writeAll(ctx, ns, 'haunted', instances);
    await writeAll(ctx, ns, 'haunted', hostileInstances(ns, 'haunted', 'c9', []));
    // Each import agent reads everything while it starts and answers /readyz only after that
    // first complete snapshot, so a cluster's clock starts when its agent is ready: the time
    // its agent took to start (seconds on a loaded machine) is not charged to the TTL rule.
    const startedAt = new Map<string, number>();
    for (const c of ctx.clusters) {
      await ctx.agent('import', c).start();
      startedAt.set(c.name, Date.now());
    }
    await controlSeen(ctx, ns, 'haunted', 'c9');
    const ghostsIn = async (c: (typeof ctx.clusters)[number]) =>
      ((await importedAddresses(c, ns, 'haunted')).get('ghost') ?? []).length;
    let atFirst = 0;
    for (const c of ctx.clusters) atFirst += await ghostsIn(c);
    const latestMs = (p.import.ttlS + heartbeatPeriodS(p) + p.slackS) * 1000;
    const goneAfter = new Map<string, number>(); // cluster -> ms from its agent's first snapshot
    const deadline = Math.max(...startedAt.values()) + latestMs + 5_000;
    while (goneAfter.size < ctx.clusters.length && Date.now() < deadline) {
      for (const c of ctx.clusters) {
        if (goneAfter.has(c.name)) continue;
        if ((await ghostsIn(c)) === 0)
          goneAfter.set(c.name, Date.now() - (startedAt.get(c.name) ?? 0));
      }
      if (goneAfter.size < ctx.clusters.length) await sleep(500);
    }
    const gone = goneAfter.size === ctx.clusters.length;
    const goneAfterMs = gone
      ? Math.max(...goneAfter.values())
      : Date.now() - Math.min(...startedAt.values());
    const live = ((await importedAddresses(ctx.cluster(1), ns, 'haunted')).get('c9') ?? []).length;
    out.figure('ghost endpoints written', n);
    out.figure('imported at first', atFirst);
    out.figure('gone after s', gone ? seconds(goneAfterMs) : 'never');
    out.figure('TTL s', p.import.ttlS);
    out.observe(
      gone
        ? `${atFirst} ghost endpoints imported at first (summed over ${ctx.clusters.length} clusters), gone at most ${seconds(goneAfterMs)} s after each import agent's first snapshot (${[...goneAfter].map(([c, ms]) => `${c} ${seconds(ms)} s`).join(', ')})`
        : `${atFirst} ghost endpoints imported and still there ${seconds(goneAfterMs)} s after the import agents started (TTL ${p.import.ttlS} s)`,
    );
    out.check(
      gone && goneAfterMs <= latestMs,
      `ghost endpoints ${gone ? `gone only after ${seconds(goneAfterMs)} s` : 'never dropped'} (latest ${seconds(latestMs)} s)`,
    );
    out.check(live > 0, "the live cluster's endpoints went too");
  },
};
