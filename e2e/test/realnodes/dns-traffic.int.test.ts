// Real nodes (kubelet, containerd, kube-proxy, CoreDNS from samples/coredns) and both agents
// as processes: a pod in c2 resolves clusterset.local names through CoreDNS and its traffic
// through the clusterset IP reaches pods in c1 and c2 over the flat pod network.
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
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
import { execInPod } from '../../src/nodes/exec.js';
import {
  deployEcho,
  exportService,
  startClientPod,
  unexportService,
  waitDeploymentPods,
  waitPodReady,
} from '../../src/nodes/workloads.js';

let state: ClustersetState;
let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
const agents: RunningAgent[] = [];
let c1Pods: { name: string; ip: string }[];
let c2Pods: { name: string; ip: string }[];

const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };

/** Runs a shell command in c2's client pod. */
const sh = (script: string) =>
  execInPod(c2.kc, { namespace: ns.name, pod: 'client', container: 'client' }, [
    'sh',
    '-c',
    script,
  ]);

/** The addresses of an A lookup from busybox nslookup's output (the server's excluded). */
function addressesOf(out: string): string[] {
  const answer = out
    .split(/Name:\s/)
    .slice(1)
    .join('\n');
  return [...answer.matchAll(/Address:\s*([0-9.]+)\s*$/gm)].map((m) => m[1]!);
}

async function clustersetIp(c: E2eCluster, name: string): Promise<string> {
  return waitFor(
    `ServiceImport ${name} in ${c.name} with an IP`,
    async () => {
      try {
        const si = (await c.kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          ...SI,
          namespace: ns.name,
          name,
        })) as { spec?: { ips?: string[] } };
        return si.spec?.ips?.[0];
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.nodes).toBe('real');
  state = loadClusterset(ctx.stateDir!);
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

describe('real nodes', () => {
  it('run pods with addresses from each cluster’s own pod range', () => {
    for (const p of c1Pods) expect(p.ip).toMatch(/^10\.1\./);
    for (const p of c2Pods) expect(p.ip).toMatch(/^10\.2\./);
  });

  it('reach a pod of c1 from a pod of c2 on the flat pod network', async () => {
    const r = await sh(`curl -s -m 5 http://${c1Pods[0]!.ip}:8080/`);
    expect(r.stdout).toContain(`pod=${c1Pods[0]!.name}`);
  });
});

describe('CoreDNS with samples/coredns (multicluster clusterset.local)', () => {
  it('answers A for a ClusterSetIP import with c2’s clusterset IP', async () => {
    const ip = await clustersetIp(c2, 'hello');
    const r = await waitFor(
      'A record',
      async () => {
        const out = await sh(`nslookup -type=A hello.${ns.name}.svc.clusterset.local.`);
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

  it('keeps <svc>.<ns>.svc.cluster.local on the local Service', async () => {
    const svc = await c2.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ namespace: ns.name, name: 'hello' });
    const r = await sh(`nslookup -type=A hello.${ns.name}.svc.cluster.local.`);
    expect(addressesOf(r.stdout)).toEqual([svc.spec?.clusterIP]);
  });

  it('answers per-pod names of a headless export', async () => {
    const core = c1.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'db' },
        spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'tcp', port: 5432 }] },
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
    await exportService(c1.kc, ns.name, 'db');
    const name = `db-0.c1.db.${ns.name}.svc.clusterset.local.`;
    const out = await waitFor(
      `A ${name}`,
      async () => {
        const r = await sh(`nslookup -type=A ${name}`);
        return addressesOf(r.stdout).includes(pod.status!.podIP!) ? r.stdout : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    expect(addressesOf(out)).toEqual([pod.status!.podIP]);
    const all = await sh(`nslookup -type=A db.${ns.name}.svc.clusterset.local.`);
    expect(addressesOf(all.stdout)).toEqual([pod.status!.podIP]);
  });
});

describe('traffic through the clusterset IP', () => {
  it('reaches pods in c1 and in c2 (kube-proxy in c2)', async () => {
    const answers = new Set<string>();
    await waitFor(
      'answers from both clusters',
      async () => {
        const r = await sh(
          `for i in 1 2 3 4 5 6 7 8 9 10; do curl -s -m 3 http://hello.${ns.name}.svc.clusterset.local/; done`,
        );
        for (const m of r.stdout.matchAll(/pod=(\S+) ip=\S+ cluster=(c\d)/g))
          answers.add(`${m[2]}/${m[1]}`);
        return (
          [...answers].some((a) => a.startsWith('c1/')) &&
          [...answers].some((a) => a.startsWith('c2/'))
        );
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    const names = [...c1Pods.map((p) => `c1/${p.name}`), ...c2Pods.map((p) => `c2/${p.name}`)];
    for (const a of answers) expect(names).toContain(a);
  });

  it('fails over: with c1 scaled to 0, every answer comes from c2', async () => {
    await c1.kc.makeApiClient(AppsV1Api).patchNamespacedDeploymentScale({
      namespace: ns.name,
      name: 'hello',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    const local = new Set(c2Pods.map((p) => p.name));
    const seen = await waitFor(
      'ten answers in a row from c2',
      async () => {
        const r = await sh(
          `for i in 1 2 3 4 5 6 7 8 9 10; do curl -s -m 3 http://hello.${ns.name}.svc.clusterset.local/; done`,
        );
        const pods = [...r.stdout.matchAll(/pod=(\S+) /g)].map((m) => m[1]!);
        return pods.length === 10 && pods.every((p) => local.has(p)) ? pods : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(new Set(seen)).toEqual(local);
  });

  it('unexport everywhere: the name is NXDOMAIN and the clusterset IP answers no more', async () => {
    const ip = await clustersetIp(c2, 'hello');
    await unexportService(c1.kc, ns.name, 'hello');
    await unexportService(c2.kc, ns.name, 'hello');
    const out = await waitFor(
      'NXDOMAIN',
      async () => {
        const r = await sh(`nslookup -type=A hello.${ns.name}.svc.clusterset.local. 2>&1; true`);
        return /NXDOMAIN/.test(r.stdout + r.stderr) ? r.stdout + r.stderr : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    expect(out).toMatch(/NXDOMAIN/);
    const r = await sh(`curl -s -m 3 http://${ip}/ 2>&1; echo exit=$?`);
    expect(r.stdout).not.toMatch(/pod=/);
    expect(r.stdout).toMatch(/exit=[1-9]/);
  });
});
