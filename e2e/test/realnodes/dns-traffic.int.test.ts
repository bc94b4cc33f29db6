// Real nodes (kubelet, containerd, kube-proxy, CoreDNS from samples/coredns) and both agents
// as processes: a pod in c2 resolves clusterset.local names through CoreDNS and its traffic
// through the clusterset IP reaches pods in c1 and c2 over the flat pod network.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import {
  loadClusterset,
  waitFor,
  type ClustersetState,
  type TestNamespace,
} from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../src/demo/agents.js';
import { stopProcesses } from '../../src/processes.js';
import { urlHost } from '../../src/network.js';
import { execInPod } from '../../src/nodes/exec.js';
import {
  deployEcho,
  exportService,
  startClientPod,
  unexportService,
  waitDeploymentPods,
  waitPodReady,
} from '../../src/nodes/workloads.js';

const ctx = e2eContext();
const state: ClustersetState = loadClusterset(ctx.stateDir!);
/** The families the clusters run (make test-realnodes IP_FAMILY=...): each is checked alone. */
const families: readonly Family[] =
  state.clusters[0]!.network.ipFamily === 'dual'
    ? ['ipv4', 'ipv6']
    : [state.clusters[0]!.network.ipFamily ?? 'ipv4'];
type Family = 'ipv4' | 'ipv6';
const isV6 = (ip: string): boolean => ip.includes(':');
const ofFamily = (ips: readonly string[], f: Family): string[] =>
  ips.filter((ip) => isV6(ip) === (f === 'ipv6'));
/** DNS record type and curl flag of a family. */
const rr = (f: Family): 'A' | 'AAAA' => (f === 'ipv4' ? 'A' : 'AAAA');
const flag = (f: Family): string => (f === 'ipv4' ? '-4' : '-6');

let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
const agents: RunningAgent[] = [];
let c1Pods: { name: string; ip: string; ips: string[] }[];
let c2Pods: { name: string; ip: string; ips: string[] }[];

const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };

/** Runs a shell command in c2's client pod. */
const sh = (script: string) =>
  execInPod(c2.kc, { namespace: ns.name, pod: 'client', container: 'client' }, [
    'sh',
    '-c',
    script,
  ]);

/** The addresses of an A or AAAA lookup from busybox nslookup's output (the server's excluded). */
function addressesOf(out: string): string[] {
  const answer = out
    .split(/Name:\s/)
    .slice(1)
    .join('\n');
  return [...answer.matchAll(/Address:\s*([0-9a-f.:]+)\s*$/gm)].map((m) => m[1]!);
}

/** The ServiceImport's clusterset IP of family `f`, once the import has one. */
async function clustersetIp(c: E2eCluster, name: string, f: Family): Promise<string> {
  return waitFor(
    `ServiceImport ${name} in ${c.name} with an ${f} IP`,
    async () => {
      try {
        const si = (await c.kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          ...SI,
          namespace: ns.name,
          name,
        })) as { spec?: { ips?: string[] } };
        return ofFamily(si.spec?.ips ?? [], f)[0];
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

/** The pods that answered `count` requests to the clusterset name over family `f`. */
async function answers(f: Family, count: number): Promise<{ cluster: string; pod: string }[]> {
  const r = await sh(
    `for i in $(seq ${count}); do curl -s ${flag(f)} -m 3 http://hello.${ns.name}.svc.clusterset.local/; done`,
  );
  return [...r.stdout.matchAll(/pod=(\S+) ip=\S+ cluster=(c\d)/g)].map((m) => ({
    pod: m[1]!,
    cluster: m[2]!,
  }));
}

beforeAll(async () => {
  expect(ctx.nodes).toBe('real');
  [c1, c2] = e2eClusters() as [E2eCluster, E2eCluster];
  for (const cluster of state.clusters) {
    for (const kind of ['export', 'import'] as const) {
      agents.push(await startAgent(kind, cluster, ctx.cloudMapEnv ?? {}, 60_000));
    }
  }
  ns = await e2eNamespace('realnodes');
  await deployEcho(c1.kc, { namespace: ns.name, name: 'hello', replicas: 2, cluster: 'c1' });
  await deployEcho(c2.kc, { namespace: ns.name, name: 'hello', replicas: 1, cluster: 'c2' });
  await startClientPod(c2.kc, ns.name);
  c1Pods = await waitDeploymentPods(c1.kc, ns.name, 'hello', 2);
  c2Pods = await waitDeploymentPods(c2.kc, ns.name, 'hello', 1);
  await exportService(c1.kc, ns.name, 'hello');
  await exportService(c2.kc, ns.name, 'hello');
}, 600_000);

afterAll(async () => {
  await ns?.delete({ wait: true, timeoutMs: 60_000 }).catch(() => undefined);
  await stopProcesses(
    agents.map((a) => a.process),
    10_000,
  );
});

describe(`real nodes (${families.join(' + ')})`, () => {
  it('run pods with an address of each family from each cluster’s own pod ranges', () => {
    // The harness's plan (docs/harness.md): cluster i has pods 10.i.0.0/16 and fd00:10:i::/56.
    const inRange = (ip: string, i: number): boolean =>
      ip.startsWith(isV6(ip) ? `fd00:10:${i}:` : `10.${i}.`);
    for (const [pods, i] of [
      [c1Pods, 1],
      [c2Pods, 2],
    ] as const) {
      for (const p of pods) {
        expect(p.ips.map((ip) => (isV6(ip) ? 'ipv6' : 'ipv4'))).toEqual(families);
        for (const ip of p.ips) expect(inRange(ip, i), `${p.name} ${ip}`).toBe(true);
      }
    }
  });

  it.for(families)('reach a pod of c1 from a pod of c2 on the flat pod network (%s)', async (f) => {
    const ip = ofFamily(c1Pods[0]!.ips, f)[0]!;
    const r = await sh(`curl -s -m 5 http://${urlHost(ip)}:8080/`);
    expect(r.stdout).toContain(`pod=${c1Pods[0]!.name}`);
  });
});

describe('CoreDNS with samples/coredns (multicluster clusterset.local)', () => {
  it.for(families)('answers %s with c2’s clusterset IP of that family (A or AAAA)', async (f) => {
    const ip = await clustersetIp(c2, 'hello', f);
    const r = await waitFor(
      `${rr(f)} record`,
      async () => {
        const out = await sh(`nslookup -type=${rr(f)} hello.${ns.name}.svc.clusterset.local.`);
        return addressesOf(out.stdout).includes(ip) ? out : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(addressesOf(r.stdout)).toEqual([ip]);
  });

  it('answers SRV with the exported port', async () => {
    const out = await waitFor(
      'SRV record',
      async () => {
        const r = await sh(`nslookup -type=SRV _http._tcp.hello.${ns.name}.svc.clusterset.local.`);
        return /service = \d+ \d+ 80 hello\./.test(r.stdout) ? r.stdout : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(out).toMatch(
      new RegExp(`service = \\d+ \\d+ 80 hello\\.${ns.name}\\.svc\\.clusterset\\.local`),
    );
  });

  // An importer writes a headless import's EndpointSlices one at a time (one per source cluster
  // and IP family). A query between two writes sees part of the answer; the sample's cache must
  // not keep that part for its 30 s (the upstream suite's headless SRV test waits 20 s). Written
  // by hand in `default`, which the agents never import into, so nothing else writes them.
  it('answers a headless name from its current slices, not a cached partial answer', async () => {
    const f = families[0]!;
    const addressType = f === 'ipv4' ? 'IPv4' : 'IPv6';
    const address = (i: number): string => (f === 'ipv4' ? `10.250.0.${i}` : `fd00:250::${i}`);
    const name = 'cache-probe';
    const fqdn = `${name}.default.svc.clusterset.local.`;
    const custom = c2.kc.makeApiClient(CustomObjectsApi);
    const discovery = c2.kc.makeApiClient(DiscoveryV1Api);
    const slice = (i: number) => ({
      metadata: {
        name: `${name}-c${i}`,
        labels: {
          'multicluster.kubernetes.io/service-name': name,
          'multicluster.kubernetes.io/source-cluster': `c${i}`,
          'endpointslice.kubernetes.io/managed-by': 'e2e.cloudmap-mcs.io',
        },
      },
      addressType,
      endpoints: [{ addresses: [address(i)], conditions: { ready: true } }],
      ports: [{ name: 'tcp', port: 80, protocol: 'TCP' }],
    });
    const lookup = async (): Promise<string[]> =>
      addressesOf((await sh(`nslookup -type=${rr(f)} ${fqdn}`)).stdout).sort();
    try {
      await custom.createNamespacedCustomObject({
        ...SI,
        namespace: 'default',
        body: {
          apiVersion: 'multicluster.x-k8s.io/v1beta1',
          kind: 'ServiceImport',
          metadata: { name },
          spec: { type: 'Headless', ports: [{ name: 'tcp', port: 80, protocol: 'TCP' }] },
        },
      });
      await discovery.createNamespacedEndpointSlice({ namespace: 'default', body: slice(1) });
      await waitFor(
        `${rr(f)} ${fqdn} with the first slice`,
        async () => ((await lookup()).length === 1 ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      await discovery.createNamespacedEndpointSlice({ namespace: 'default', body: slice(2) });
      // Well past CoreDNS's informer delay (well under a second), well short of 30 s.
      const both = await waitFor(
        `${rr(f)} ${fqdn} with both slices`,
        async () => {
          const got = await lookup();
          return got.length === 2 ? got : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 1000 },
      );
      expect(both).toEqual([address(1), address(2)].sort());
    } finally {
      for (const i of [1, 2])
        await discovery
          .deleteNamespacedEndpointSlice({ namespace: 'default', name: `${name}-c${i}` })
          .catch(() => undefined);
      await custom
        .deleteNamespacedCustomObject({ ...SI, namespace: 'default', name })
        .catch(() => undefined);
    }
  });

  it('keeps <svc>.<ns>.svc.cluster.local on the local Service', async () => {
    const svc = await c2.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ namespace: ns.name, name: 'hello' });
    for (const f of families) {
      const r = await sh(`nslookup -type=${rr(f)} hello.${ns.name}.svc.cluster.local.`);
      expect(addressesOf(r.stdout)).toEqual(ofFamily(svc.spec?.clusterIPs ?? [], f));
    }
  });

  it('answers per-pod names of a headless export (A and AAAA per family)', async () => {
    const core = c1.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'db' },
        spec: {
          clusterIP: 'None',
          ipFamilyPolicy: 'PreferDualStack',
          selector: { app: 'db' },
          ports: [{ name: 'tcp', port: 5432 }],
        },
      },
    });
    await core.createNamespacedPod({
      namespace: ns.name,
      body: {
        metadata: { name: 'db-0', labels: { app: 'db' } },
        spec: {
          hostname: 'db-0',
          subdomain: 'db',
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'db',
              image: 'cloudmap-mcs.local/busybox:1',
              imagePullPolicy: 'Never',
              command: ['sleep', '100000'],
            },
          ],
        },
      },
    });
    const pod = await waitPodReady(c1.kc, ns.name, 'db-0');
    const podIps = (pod.status?.podIPs ?? []).map((x) => x.ip);
    expect(podIps).toHaveLength(families.length);
    await exportService(c1.kc, ns.name, 'db');
    const name = `db-0.c1.db.${ns.name}.svc.clusterset.local.`;
    for (const f of families) {
      const want = ofFamily(podIps, f);
      const out = await waitFor(
        `${rr(f)} ${name}`,
        async () => {
          const r = await sh(`nslookup -type=${rr(f)} ${name}`);
          return addressesOf(r.stdout).includes(want[0]!) ? r.stdout : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
      expect(addressesOf(out)).toEqual(want);
      const all = await sh(`nslookup -type=${rr(f)} db.${ns.name}.svc.clusterset.local.`);
      expect(addressesOf(all.stdout)).toEqual(want);
    }
  });
});

describe('traffic through the clusterset IP', () => {
  it.for(families)('reaches pods in c1 and in c2 over %s (kube-proxy in c2)', async (f) => {
    const seen = new Set<string>();
    await waitFor(
      `answers from both clusters over ${f}`,
      async () => {
        for (const a of await answers(f, 10)) seen.add(`${a.cluster}/${a.pod}`);
        return (
          [...seen].some((a) => a.startsWith('c1/')) && [...seen].some((a) => a.startsWith('c2/'))
        );
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    const names = [...c1Pods.map((p) => `c1/${p.name}`), ...c2Pods.map((p) => `c2/${p.name}`)];
    for (const a of seen) expect(names).toContain(a);
  });

  it('fails over: with c1 scaled to 0, every answer over each family comes from c2', async () => {
    await c1.kc.makeApiClient(AppsV1Api).patchNamespacedDeploymentScale({
      namespace: ns.name,
      name: 'hello',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    const local = new Set(c2Pods.map((p) => p.name));
    for (const f of families) {
      const seen = await waitFor(
        `ten answers in a row from c2 over ${f}`,
        async () => {
          const pods = (await answers(f, 10)).map((a) => a.pod);
          return pods.length === 10 && pods.every((p) => local.has(p)) ? pods : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      expect(new Set(seen)).toEqual(local);
    }
  });

  it('unexport everywhere: the name is NXDOMAIN for every family and the clusterset IPs answer no more', async () => {
    const ips = await Promise.all(families.map((f) => clustersetIp(c2, 'hello', f)));
    await unexportService(c1.kc, ns.name, 'hello');
    await unexportService(c2.kc, ns.name, 'hello');
    for (const f of families) {
      const out = await waitFor(
        `NXDOMAIN for ${rr(f)}`,
        async () => {
          const r = await sh(
            `nslookup -type=${rr(f)} hello.${ns.name}.svc.clusterset.local. 2>&1; true`,
          );
          return /NXDOMAIN/.test(r.stdout + r.stderr) ? r.stdout + r.stderr : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
      expect(out).toMatch(/NXDOMAIN/);
    }
    for (const ip of ips) {
      const r = await sh(`curl -s -m 3 http://${urlHost(ip)}/ 2>&1; echo exit=$?`);
      expect(r.stdout).not.toMatch(/pod=/);
      expect(r.stdout).toMatch(/exit=[1-9]/);
    }
  });
});
