// The Helm chart installed for real: both agents as pods from the images the Dockerfiles build
// (deploy/docker/build-images.sh), on the real nodes, with the values a user would write.
// Three configurations: export-only in c1 and import-only in c2 (two import replicas, leader
// election), then c1 upgraded to both agents. The Cloud Map emulator is a private endpoint for
// the pods (aws.cloudMapEndpoint = a relay on the node IP, credentials from a Secret).
// Figures (image sizes, start-to-ready, failover) are printed; docs/install.md quotes them.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  loadClusterset,
  waitFor,
  type ClusterInfo,
  type ClustersetState,
  type TestNamespace,
} from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentFullname,
  agentSelector,
  chartValues,
  createCredentialsSecret,
  helmInstall,
  helmUninstall,
  leaseHolder,
  readLease,
  releaseNamespace,
  valuesDir,
  waitAgentPods,
  writeValues,
  type AgentPod,
  type ChartValuesOptions,
} from '../../src/helm/chart.js';
import {
  buildAgentImages,
  importAgentImages,
  type AgentImages,
  type AgentName,
} from '../../src/helm/images.js';
import { inCidr, urlHost } from '../../src/network.js';
import { execInPod } from '../../src/nodes/exec.js';
import { relayHostPortToNode } from '../../src/nodes/relay.js';
import { stopProcesses, type ProcessRecord } from '../../src/processes.js';
import {
  deployEcho,
  exportService,
  startClientPod,
  unexportService,
  waitDeploymentPods,
} from '../../src/nodes/workloads.js';

const RELEASE = 'mcs';
const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };
const figures: string[] = [];
const figure = (line: string) => {
  figures.push(line);
  console.log(`[chart figures] ${line}`);
};

let state: ClustersetState;
let c1: E2eCluster;
let c2: E2eCluster;
let info1: ClusterInfo;
let info2: ClusterInfo;
let ns: TestNamespace;
let images: AgentImages;
let endpoints: Record<string, string>;
let helloPods: { name: string; ip: string; ips: string[] }[];
const relays: ProcessRecord[] = [];

function values(
  cluster: ClusterInfo,
  o: Pick<ChartValuesOptions, 'exportAgent' | 'importAgent'> & {
    extra?: ChartValuesOptions['extra'];
    testTimings?: ChartValuesOptions['testTimings'];
  },
) {
  return chartValues({
    images,
    ...o,
    cloudMapEndpoint: endpoints[cluster.name]!,
    region: 'us-east-1',
    allowedCidrs: state.clusters.flatMap((c) => c.network.podCidr.split(',')),
    allowedNamespaces: [ns.name],
  });
}

async function install(
  cluster: ClusterInfo,
  name: string,
  v: Record<string, unknown>,
  verb: 'install' | 'upgrade' = 'install',
) {
  const file = writeValues(valuesDir(state.stateDir), name, v);
  const t0 = Date.now();
  await helmInstall(cluster, RELEASE, file, verb);
  return Date.now() - t0;
}

const sh = (kc: KubeConfig, script: string) =>
  execInPod(kc, { namespace: ns.name, pod: 'client', container: 'client' }, ['sh', '-c', script]);

async function serviceImport(kc: KubeConfig, name = 'hello') {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      ...SI,
      namespace: ns.name,
      name,
    })) as { spec?: { ips?: string[] } };
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Ready endpoint addresses of the EndpointSlices the import agent derived for `hello`. */
async function importedAddresses(kc: KubeConfig): Promise<string[]> {
  const slices = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace: ns.name,
    labelSelector: 'multicluster.kubernetes.io/service-name=hello',
  });
  return slices.items
    .flatMap((s) => s.endpoints ?? [])
    .filter((e) => e.conditions?.ready !== false)
    .flatMap((e) => e.addresses)
    .sort();
}

/** Names of the agent's pods that are not terminating (Ready or not). */
async function livePodNames(kc: KubeConfig, agent: AgentName): Promise<string[]> {
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({
    namespace: releaseNamespace,
    labelSelector: agentSelector(RELEASE, agent),
  });
  return pods.items
    .filter((p) => p.metadata?.deletionTimestamp === undefined)
    .map((p) => p.metadata?.name ?? '');
}

type WatchResult = Awaited<ReturnType<ImportWatch['stop']>>;

interface ImportWatch {
  /** Stops sampling; what was seen while it ran. */
  stop(): Promise<{
    samples: number;
    /** Samples where the ServiceImport or its endpoints were not as wanted. */
    lost: string[];
    /** Longest time no live (non-terminating) import pod held the Lease. */
    maxLeaderlessMs: number;
    /** Distinct Lease holders, in the order seen ('' = none). */
    holders: string[];
    /** When a live pod other than `previousLeader` first held the Lease (ms since epoch). */
    newLeaderAtMs?: number;
  }>;
}

/**
 * Every 200 ms: is c2's import of hello present with c1's endpoints, and does a live import
 * pod hold the Lease? A terminating pod (deleted, releasing) does not count as a leader.
 */
function watchImportAndLease(kc: KubeConfig, want: string[], previousLeader: string): ImportWatch {
  const lost: string[] = [];
  const holders: string[] = [];
  let samples = 0;
  let sampling = true;
  let leaderlessSince: number | undefined;
  let maxLeaderlessMs = 0;
  let newLeaderAtMs: number | undefined;
  const loop = (async () => {
    while (sampling) {
      const [si, addrs, lease, live] = await Promise.all([
        serviceImport(kc),
        importedAddresses(kc),
        readLease(kc, RELEASE, 'import-agent'),
        livePodNames(kc, 'import-agent'),
      ]);
      const now = Date.now();
      samples++;
      if (si === undefined || JSON.stringify(addrs) !== JSON.stringify(want))
        lost.push(
          `${new Date(now).toISOString()}: import ${si ? 'present' : 'missing'}, endpoints ${addrs.join(',') || 'none'}`,
        );
      const holder = lease?.holder ?? '';
      if (holders.at(-1) !== holder) holders.push(holder);
      if (holder !== '' && live.includes(holder)) {
        if (leaderlessSince !== undefined)
          maxLeaderlessMs = Math.max(maxLeaderlessMs, now - leaderlessSince);
        leaderlessSince = undefined;
        if (holder !== previousLeader) newLeaderAtMs ??= now;
      } else leaderlessSince ??= now;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      if (leaderlessSince !== undefined)
        maxLeaderlessMs = Math.max(maxLeaderlessMs, Date.now() - leaderlessSince);
      return {
        samples,
        lost,
        maxLeaderlessMs,
        holders,
        ...(newLeaderAtMs === undefined ? {} : { newLeaderAtMs }),
      };
    },
  };
}

/**
 * The Lease holder once it is a live import pod other than `previous`, and that pod's own
 * /readyz passes: it leads and has synced (caches, local addresses, the first complete Cloud
 * Map snapshot), i.e. the import controller runs again. Asked from c2's client pod.
 */
async function leadingAndSynced(previous: string, timeoutMs: number): Promise<string> {
  const holder = await waitFor(
    'a live import pod (not the previous leader) holds the Lease',
    async () => {
      const h = await leaseHolder(c2.kc, RELEASE, 'import-agent');
      if (h === undefined || h === previous) return undefined;
      return (await livePodNames(c2.kc, 'import-agent')).includes(h) ? h : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
  const pod = await c2.kc
    .makeApiClient(CoreV1Api)
    .readNamespacedPod({ namespace: releaseNamespace, name: holder });
  const ip = pod.status?.podIP ?? '';
  await waitFor(
    `the new leader ${holder} passes /readyz (synced)`,
    async () => {
      const r = await sh(c2.kc, `curl -s -m 3 http://${urlHost(ip)}:8081/readyz`);
      return r.stdout.includes('readyz check passed');
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  expect(await leaseHolder(c2.kc, RELEASE, 'import-agent')).toBe(holder);
  return holder;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
function podTimes(label: string, pods: AgentPod[]) {
  for (const p of pods)
    figure(
      `${label} ${p.name}: created→started ${seconds(p.startedMs - p.createdMs)}, started→Ready ${seconds(p.readyMs - p.startedMs)}, created→Ready ${seconds(p.readyMs - p.createdMs)}`,
    );
}

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.nodes).toBe('real');
  state = loadClusterset(ctx.stateDir!);
  [c1, c2] = e2eClusters() as [E2eCluster, E2eCluster];
  [info1, info2] = state.clusters as [ClusterInfo, ClusterInfo];
  expect(state.emulator, 'the harness runs the Cloud Map emulator').toBeDefined();

  const t0 = Date.now();
  images = buildAgentImages();
  figure(`image build (or cache hit): ${seconds(Date.now() - t0)}`);
  for (const i of Object.values(images))
    figure(`image ${i.reference}: ${(i.bytes / 1e6).toFixed(0)} MB (OCI archive)`);
  endpoints = {};
  for (const c of state.clusters) {
    figure(
      `${c.name}: images imported into the node's containerd in ${seconds(importAgentImages(c, images))}`,
    );
    const relay = await relayHostPortToNode({
      plan: c.realNode!,
      port: state.emulator!.port,
      name: 'cloudmap',
      detached: false,
    });
    relays.push(...relay.processes);
    endpoints[c.name] = relay.url;
    await createCredentialsSecret(
      (c.name === 'c1' ? c1 : c2).kc,
      releaseNamespace,
      ctx.cloudMapEnv ?? {},
    );
  }

  ns = await e2eNamespace('chart');
  await deployEcho(c1.kc, { namespace: ns.name, name: 'hello', replicas: 2, cluster: 'c1' });
  helloPods = await waitDeploymentPods(c1.kc, ns.name, 'hello', 2);
  await startClientPod(c1.kc, ns.name);
  await startClientPod(c2.kc, ns.name);

  // Configuration 1 and 2: export-only spoke c1, import-only hub c2 (two replicas).
  figure(
    `helm install c1 (export only) until Ready: ${seconds(await install(info1, 'c1-export-only', values(info1, { exportAgent: true, importAgent: false })))}`,
  );
  figure(
    `helm install c2 (import only) until Ready: ${seconds(await install(info2, 'c2-import-only', values(info2, { exportAgent: false, importAgent: true })))}`,
  );
  await exportService(c1.kc, ns.name, 'hello');
}, 1_500_000);

afterAll(async () => {
  // Unexport while the export agent still runs (it removes the records and its finalizer).
  await unexportService(c1.kc, ns.name, 'hello').catch(() => undefined);
  await waitFor(
    'ServiceExport hello gone',
    async () => {
      try {
        await c1.kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group: 'multicluster.x-k8s.io',
          version: 'v1alpha1',
          plural: 'serviceexports',
          namespace: ns.name,
          name: 'hello',
        });
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: 30_000 },
  ).catch(() => undefined);
  for (const c of [info1, info2]) {
    try {
      await helmUninstall(c, RELEASE);
    } catch {
      // already uninstalled by a test
    }
  }
  await ns?.delete({ wait: true, timeoutMs: 60_000 }).catch(() => undefined);
  await stopProcesses(relays, 5_000);
  console.log(`[chart figures]\n  ${figures.join('\n  ')}`);
}, 300_000);

describe('helm install on real nodes', () => {
  it('runs the agents Ready through the chart’s probes', async () => {
    const exp = await waitAgentPods(c1.kc, RELEASE, 'export-agent', 2);
    const imp = await waitAgentPods(c2.kc, RELEASE, 'import-agent', 2);
    podTimes('c1 export-agent pod', exp);
    podTimes('c2 import-agent pod', imp);
    // No agent of the other kind in either cluster: the values decide.
    const core1 = c1.kc.makeApiClient(CoreV1Api);
    const none = await core1.listNamespacedPod({
      namespace: releaseNamespace,
      labelSelector: agentSelector(RELEASE, 'import-agent'),
    });
    expect(none.items).toEqual([]);
    for (const [kc, agent] of [
      [c1.kc, 'export-agent'],
      [c2.kc, 'import-agent'],
    ] as const) {
      const dep = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({
        namespace: releaseNamespace,
        name: agentFullname(RELEASE, agent),
      });
      const c = dep.spec!.template.spec!.containers[0]!;
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(c.startupProbe?.httpGet?.path).toBe('/healthz');
      expect(c.image).toBe(images[agent].reference);
      expect(dep.status?.readyReplicas).toBe(2);
    }
  });

  it('runs them as the non-root user with a read-only root filesystem', async () => {
    for (const [kc, agent] of [
      [c1.kc, 'export-agent'],
      [c2.kc, 'import-agent'],
    ] as const) {
      const [pod] = await waitAgentPods(kc, RELEASE, agent, 2);
      const r = await execInPod(
        kc,
        { namespace: releaseNamespace, pod: pod!.name, container: agent },
        [
          'node',
          '-e',
          `const fs=require('fs');const w=(p)=>{try{fs.writeFileSync(p,'x');fs.rmSync(p);return 'ok'}catch(e){return e.code}};console.log(JSON.stringify({uid:process.getuid(),gid:process.getgid(),root:w('/app/probe'),etc:w('/etc/probe'),tmp:w('/tmp/probe')}))`,
        ],
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        uid: 65532,
        gid: 65532,
        root: 'EROFS',
        etc: 'EROFS',
        tmp: 'ok',
      });
    }
  });

  it('export → import → DNS → traffic (c1 exports, c2 imports)', async () => {
    const want = helloPods.flatMap((p) => p.ips).sort();
    await waitFor(
      'c2 imports hello with c1’s endpoints',
      async () => {
        const addrs = await importedAddresses(c2.kc);
        return JSON.stringify(addrs) === JSON.stringify(want) ? addrs : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const si = await serviceImport(c2.kc);
    // The clusterset IP is c2's own, from its Service range (the primary family's).
    const ip = si?.spec?.ips?.[0] ?? '';
    const c2Range = info2.network.serviceCidr.split(',')[0]!;
    expect(inCidr(ip, c2Range), `${ip} in ${c2Range}`).toBe(true);
    const record = ip.includes(':') ? 'AAAA' : 'A';
    const dns = await waitFor(
      `clusterset.local ${record} record in c2`,
      async () => {
        const r = await sh(
          c2.kc,
          `nslookup -type=${record} hello.${ns.name}.svc.clusterset.local.`,
        );
        return r.stdout.includes(`Address: ${ip}`) ? r.stdout : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(dns).toContain(ip);
    const answered = new Set<string>();
    await waitFor(
      'answers from both c1 pods through the clusterset IP',
      async () => {
        const r = await sh(
          c2.kc,
          `for i in 1 2 3 4 5 6 7 8; do curl -s -m 3 http://hello.${ns.name}.svc.clusterset.local/; echo; done`,
        );
        for (const m of r.stdout.matchAll(/pod=(\S+)/g)) answered.add(m[1]!);
        return helloPods.every((p) => answered.has(p.name));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect([...answered].sort()).toEqual(helloPods.map((p) => p.name).sort());
  });

  it('serves /metrics through each agent’s metrics Service', async () => {
    // The Service may answer from the standby, which serves no data gauges (only counters,
    // build_info and its leader status): look for what every replica serves.
    for (const [kc, agent, metric] of [
      [c1.kc, 'export-agent', 'mcs_export_heartbeat_renewals_total{result="success"}'],
      [c2.kc, 'import-agent', 'mcs_import_'],
    ] as const) {
      const url = `http://${agentFullname(RELEASE, agent)}-metrics.${releaseNamespace}.svc.cluster.local:8080/metrics`;
      const r = await waitFor(
        `${agent} metrics`,
        async () => {
          const out = await sh(kc, `curl -s -m 5 ${url}`);
          return out.code === 0 && out.stdout.includes('# TYPE') ? out.stdout : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 1000 },
      );
      expect(r).toContain(metric);
      expect(r).toMatch(
        new RegExp(`^cloudmap_mcs_build_info\\{version="[^"]+",agent="${agent}"\\} 1$`, 'm'),
      );
      expect(r).toMatch(/^leader_election_master_status\{name="[^"]+"\} [01]$/m);
      expect(r).toMatch(/process_cpu_seconds_total|nodejs_/);
    }
  });

  // docs/install.md §8: on SIGTERM the leader releases the Lease; whichever replica campaigns
  // first then takes it — the standby at its next retry (every 2-2.4 s), or the Deployment's
  // replacement pod if it starts first. Either way a live replica leads within the lease
  // duration, and the imports stay as they are meanwhile (nobody deletes them).
  it('two import replicas elect one leader; deleting the leader hands over within the lease', async () => {
    const pods = await waitAgentPods(c2.kc, RELEASE, 'import-agent', 2);
    const leader = await waitFor(
      'import-agent leader',
      () => leaseHolder(c2.kc, RELEASE, 'import-agent'),
      { timeoutMs: 30_000 },
    );
    const names = pods.map((p) => p.name);
    expect(names).toContain(leader);
    const standby = names.find((n) => n !== leader)!;
    const want = helloPods.flatMap((p) => p.ips).sort();
    const watch = watchImportAndLease(c2.kc, want, leader);
    const t0 = Date.now();
    await c2.kc
      .makeApiClient(CoreV1Api)
      .deleteNamespacedPod({ namespace: releaseNamespace, name: leader });
    let next: string;
    let seen: WatchResult;
    try {
      next = await leadingAndSynced(leader, 60_000);
      // Keep sampling for a while after the new leader synced: its first reconciles come
      // then, and a handover under a second (seen 0.6 s) would otherwise leave too few
      // samples to say the import stayed.
      await new Promise((r) => setTimeout(r, 3_000));
    } finally {
      seen = await watch.stop();
    }
    expect(seen.newLeaderAtMs, `Lease holders seen: ${seen.holders.join(' → ')}`).toBeDefined();
    const handover = seen.newLeaderAtMs! - t0;
    const replacement = !names.includes(next);
    figure(
      `import-agent failover (leader pod deleted → ${replacement ? 'the replacement pod' : 'the standby'} holds the Lease): ${seconds(handover)}; holders ${seen.holders.map((h) => h || '(released)').join(' → ')}`,
    );
    // The chart's import Lease lasts 15 s (the agents' default); the handover must fit in it.
    expect(handover).toBeLessThan(15_000);
    expect(seen.maxLeaderlessMs).toBeLessThan(15_000);
    // The import was there with c1's endpoints at every sample, through the new leader's sync.
    expect(seen.samples).toBeGreaterThan(5);
    expect(seen.lost).toEqual([]);
    // Two Ready replicas again: the standby and the pod the Deployment made for the deleted
    // one; the new holder is one of them.
    const after = await waitAgentPods(c2.kc, RELEASE, 'import-agent', 2);
    const made = after.filter((p) => !names.includes(p.name));
    expect(made).toHaveLength(1);
    expect(after.map((p) => p.name).sort()).toEqual([standby, made[0]!.name].sort());
    expect([standby, made[0]!.name]).toContain(next);
    podTimes('c2 import-agent replacement pod', made);
  });

  it('helm upgrade with a changed value rolls the agents without losing the import', async () => {
    const before = (await waitAgentPods(c2.kc, RELEASE, 'import-agent', 2)).map((p) => p.name);
    const leader = await waitFor(
      'import-agent leader',
      () => leaseHolder(c2.kc, RELEASE, 'import-agent'),
      { timeoutMs: 30_000 },
    );
    const want = helloPods.flatMap((p) => p.ips).sort();
    const watch = watchImportAndLease(c2.kc, want, leader);
    let took: number;
    let after: string[];
    let next: string;
    let seen: WatchResult;
    try {
      took = await install(
        info2,
        'c2-import-only-upgraded',
        values(info2, {
          exportAgent: false,
          importAgent: true,
          extra: { logLevel: 'debug', importAgent: { poll: { fastSeconds: 2 } } },
          testTimings: { importAgent: { pollSlowSeconds: 30, pollResyncSeconds: 600 } },
        }),
        'upgrade',
      );
      after = (await waitAgentPods(c2.kc, RELEASE, 'import-agent', 2)).map((p) => p.name);
      // helm --wait returns once the new ReplicaSet is Ready; the last old pod (often the
      // leader) may still be terminating. Keep watching until a new pod leads and has synced.
      next = await leadingAndSynced(leader, 60_000);
    } finally {
      seen = await watch.stop();
    }
    figure(
      `helm upgrade c2 (logLevel, poll.fastSeconds) until rolled and Ready: ${seconds(took)}; longest time without a live Lease holder ${seconds(seen.maxLeaderlessMs)}; holders ${seen.holders.map((h) => h || '(released)').join(' → ')}`,
    );
    expect(after.filter((n) => before.includes(n))).toEqual([]);
    expect(after).toContain(next);
    const dep = await c2.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({
      namespace: releaseNamespace,
      name: agentFullname(RELEASE, 'import-agent'),
    });
    const env = dep.spec!.template.spec!.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'MCS_POLL_FAST_SECONDS')?.value).toBe('2');
    // Imports never lost (sampled every 200 ms from before the upgrade until a new pod leads
    // and has synced), and the Lease never without a live holder for a lease duration.
    expect(seen.samples).toBeGreaterThan(5);
    expect(seen.lost).toEqual([]);
    expect(seen.maxLeaderlessMs).toBeLessThan(15_000);
  });

  it('helm uninstall removes the agents’ objects and leaves the imports', async () => {
    await helmUninstall(info2, RELEASE);
    const core = c2.kc.makeApiClient(CoreV1Api);
    const sel = `app.kubernetes.io/instance=${RELEASE}`;
    await waitFor(
      'agent pods gone',
      async () => {
        const pods = await core.listNamespacedPod({
          namespace: releaseNamespace,
          labelSelector: sel,
        });
        return pods.items.length === 0;
      },
      { timeoutMs: 60_000 },
    );
    const apps = c2.kc.makeApiClient(AppsV1Api);
    expect(
      (await apps.listNamespacedDeployment({ namespace: releaseNamespace, labelSelector: sel }))
        .items,
    ).toEqual([]);
    expect(
      (await core.listNamespacedService({ namespace: releaseNamespace, labelSelector: sel })).items,
    ).toEqual([]);
    expect(
      (await core.listNamespacedServiceAccount({ namespace: releaseNamespace, labelSelector: sel }))
        .items,
    ).toEqual([]);
    const rbac = await import('@kubernetes/client-node').then((m) =>
      c2.kc.makeApiClient(m.RbacAuthorizationV1Api),
    );
    expect((await rbac.listClusterRole({ labelSelector: sel })).items).toEqual([]);
    expect((await rbac.listClusterRoleBinding({ labelSelector: sel })).items).toEqual([]);
    expect(
      (await rbac.listNamespacedRole({ namespace: releaseNamespace, labelSelector: sel })).items,
    ).toEqual([]);
    const policy = await import('@kubernetes/client-node').then((m) =>
      c2.kc.makeApiClient(m.PolicyV1Api),
    );
    expect(
      (
        await policy.listNamespacedPodDisruptionBudget({
          namespace: releaseNamespace,
          labelSelector: sel,
        })
      ).items,
    ).toEqual([]);
    // docs/install.md: the imports stay as last written (and keep serving) until deleted.
    expect(await serviceImport(c2.kc)).toBeDefined();
    expect(await importedAddresses(c2.kc)).toEqual(helloPods.flatMap((p) => p.ips).sort());
    const r = await sh(c2.kc, `curl -s -m 3 http://hello.${ns.name}.svc.clusterset.local/`);
    expect(r.stdout).toMatch(/pod=/);
    // The Lease is the agents' own (created at run time, not by Helm): it stays. Helm deletes
    // the agent's RBAC together with its Deployment, so the leader cannot always release it on
    // SIGTERM; unreleased, it expires as client-go's Leases do (ADR 0020): 15 s after its last
    // renewal, which a later install's standby judges by its own clock.
    const lease = await readLease(c2.kc, RELEASE, 'import-agent');
    expect(lease).toBeDefined();
    // Released (holder cleared, 1 s) or client-go's lease duration, never an hour.
    expect([1, 15]).toContain(lease?.durationSeconds);
    await waitFor(
      'the import Lease released or expired',
      async () => {
        const l = await readLease(c2.kc, RELEASE, 'import-agent');
        if (l === undefined) return false;
        return l.holder === '' || l.renewMs + l.durationSeconds * 1000 < Date.now();
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
  });

  it('both agents in one cluster (c1 upgraded to a member): it imports its own export', async () => {
    const took = await install(
      info1,
      'c1-both',
      values(info1, { exportAgent: true, importAgent: true }),
      'upgrade',
    );
    figure(`helm upgrade c1 to both agents until Ready: ${seconds(took)}`);
    podTimes('c1 import-agent pod', await waitAgentPods(c1.kc, RELEASE, 'import-agent', 2));
    await waitAgentPods(c1.kc, RELEASE, 'export-agent', 2);
    const want = helloPods.flatMap((p) => p.ips).sort();
    await waitFor(
      'c1 imports hello',
      async () => {
        const addrs = await importedAddresses(c1.kc);
        return JSON.stringify(addrs) === JSON.stringify(want);
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const ip = (await serviceImport(c1.kc))?.spec?.ips?.[0] ?? '';
    const c1Range = info1.network.serviceCidr.split(',')[0]!;
    expect(inCidr(ip, c1Range), `${ip} in ${c1Range}`).toBe(true);
    await waitFor(
      'traffic from c1 through its clusterset IP',
      async () => {
        const r = await sh(c1.kc, `curl -s -m 3 http://hello.${ns.name}.svc.clusterset.local/`);
        return /pod=/.test(r.stdout);
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
  });
});

export type { AgentName };
