import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { waitFor } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { Attr, type CloudMapPort } from '@cloudmap-mcs/core';
import { startAgentProcess, type AgentProcess } from './int/agent-process.js';
import { cloudMapReader, instancesOf } from './int/cloudmap-reader.js';

// Issue 17 item 3, done-when: a DNS-namespace export answers A and SRV queries through the
// emulator's DNS with the exported endpoints, and follows scaling. Real kube-apiservers, the
// export agents as real processes (one per cluster, --dns-records with a VPC, so the agent
// creates the DNS_PRIVATE namespace itself), and a real resolver (node:dns, c-ares) pointed
// at the emulator's DNS port from cloudmap.env.
const clusters = e2eClusters();
const ctx = e2eContext();
const env: Record<string, string> = { ...(ctx.cloudMapEnv ?? {}) };
const dnsServer = env['CLOUDMAP_EMULATOR_DNS'];
const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let ns: string;
let deleteNs: () => Promise<void> = async () => {};
let reader: CloudMapPort;
const agents: AgentProcess[] = [];
const resolver = new Resolver({ timeout: 2_000, tries: 2 });

const sliceBody = (name: string, ips: { ip: string; ready?: boolean }[]): V1EndpointSlice => ({
  metadata: {
    name: `${name}-manual`,
    namespace: ns,
    labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'e2e' },
  },
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  endpoints: ips.map((a) => ({
    addresses: [a.ip],
    conditions: { ready: a.ready ?? true, serving: a.ready ?? true, terminating: false },
  })),
});

async function exportService(c: E2eCluster, name: string, ips: { ip: string }[]) {
  await c.kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns },
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
    },
  });
  await c.kc
    .makeApiClient(DiscoveryV1Api)
    .createNamespacedEndpointSlice({ namespace: ns, body: sliceBody(name, ips) });
  await c.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...SE,
    namespace: ns,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name, namespace: ns },
    },
  });
}

const setEndpoints = (c: E2eCluster, name: string, ips: { ip: string; ready?: boolean }[]) =>
  c.kc.makeApiClient(DiscoveryV1Api).replaceNamespacedEndpointSlice({
    namespace: ns,
    name: `${name}-manual`,
    body: sliceBody(name, ips),
  });

/** The A answer, sorted; [] for NXDOMAIN/NODATA (no endpoint instance left). */
async function aRecords(name: string): Promise<string[]> {
  try {
    return (await resolver.resolve4(name)).sort();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
    throw error;
  }
}

/** Each SRV record as `<address its target resolves to>:<port>`, sorted. */
async function srvTargets(name: string): Promise<string[]> {
  const out: string[] = [];
  for (const r of await resolver.resolveSrv(name))
    for (const a of await resolver.resolve4(r.name)) out.push(`${a}:${r.port}`);
  return out.sort();
}

/** Polls until the A answer is exactly `want` (DNS follows once the operations succeed). */
const untilA = (name: string, want: string[]) =>
  waitFor(
    `A ${name} = ${want.join(',')}`,
    async () => JSON.stringify(await aRecords(name)) === JSON.stringify(want),
    { timeoutMs: 60_000, intervalMs: 200 },
  );

// Skipped only on external clusters without the emulator (real AWS: no emulator DNS to ask).
// The harness always runs the emulator's DNS server, so there a missing address is a broken
// harness and fails the suite instead of hiding it.
describe.skipIf(ctx.external && dnsServer === undefined)(
  'DNS namespace export resolved through the emulator DNS (real resolver)',
  () => {
    const [c1, c2] = [clusters[0]!, clusters[1]!];

    beforeAll(async () => {
      expect(dnsServer, 'cloudmap.env has no CLOUDMAP_EMULATOR_DNS').toBeDefined();
      const created = await e2eNamespace('dns');
      ns = created.name;
      deleteNs = () => created.delete();
      reader = cloudMapReader(env);
      resolver.setServers([dnsServer!]);
    });

    afterAll(async () => {
      for (const a of agents.splice(0)) await a.stop();
      for (const c of clusters) {
        const custom = c.kc.makeApiClient(CustomObjectsApi);
        const list = (await custom.listNamespacedCustomObject({ ...SE, namespace: ns })) as {
          items: { metadata: { name: string } }[];
        };
        for (const se of list.items) {
          await custom.patchNamespacedCustomObject(
            {
              ...SE,
              namespace: ns,
              name: se.metadata.name,
              body: { metadata: { finalizers: null } },
            },
            merge,
          );
        }
      }
      await deleteNs();
    });

    const args = ['--dns-records', '--dns-ttl', '1', '--dns-namespace-vpc', 'vpc-e2e0dns'];
    /** One export agent per cluster, shared by the tests (started by the first that runs). */
    const startAgents = () => {
      if (agents.length > 0) return;
      agents.push(startAgentProcess(c1.kubeconfigPath, env, args));
      agents.push(startAgentProcess(c2.kubeconfigPath, env, args));
    };

    it('answers A and SRV with both clusters’ endpoints and follows scaling and readiness', async () => {
      startAgents();
      await exportService(c1, 'web', [{ ip: '10.9.0.1' }, { ip: '10.9.0.2' }]);
      await exportService(c2, 'web', [{ ip: '10.9.1.1' }]);
      const name = `web.${ns}`;

      await untilA(name, ['10.9.0.1', '10.9.0.2', '10.9.1.1']);
      const withTtl = await resolver.resolve4(name, { ttl: true });
      expect(withTtl.map((r) => r.ttl)).toEqual([1, 1, 1]);

      // SRV: one record per endpoint instance, its port, a target that resolves to its address.
      const srv = await resolver.resolveSrv(name);
      const endpoints = (await instancesOf(reader, ns, 'web', {})).filter(
        (i) => i.attributes[Attr.Record] === 'endpoint',
      );
      expect(srv.map((r) => `${r.name}:${r.port}`).sort()).toEqual(
        endpoints.map((i) => `${i.id.toLowerCase()}.${name}:8080`).sort(),
      );
      for (const r of srv) {
        const [address] = await resolver.resolve4(r.name);
        const instance = endpoints.find((i) => `${i.id.toLowerCase()}.${name}` === r.name);
        expect(address).toBe(instance?.attributes[Attr.Ipv4]);
      }

      // Scale up in c1, down in c2: the answers follow.
      await setEndpoints(c1, 'web', [{ ip: '10.9.0.1' }, { ip: '10.9.0.2' }, { ip: '10.9.0.3' }]);
      await setEndpoints(c2, 'web', []);
      await untilA(name, ['10.9.0.1', '10.9.0.2', '10.9.0.3']);
      expect(await srvTargets(name)).toEqual(['10.9.0.1:8080', '10.9.0.2:8080', '10.9.0.3:8080']);

      // An endpoint that stops being ready drops out of the answer (custom health).
      await setEndpoints(c1, 'web', [
        { ip: '10.9.0.1' },
        { ip: '10.9.0.2', ready: false },
        { ip: '10.9.0.3' },
      ]);
      await untilA(name, ['10.9.0.1', '10.9.0.3']);

      // Latency of an answer from the emulator, measured with raw UDP queries: the emulator's
      // work plus the loopback round trip, without the resolver's own overhead.
      const samples = await udpRoundTrips(dnsServer!, name, 200);
      samples.sort((a, b) => a - b);
      console.info(
        `emulator DNS A answers over UDP (200 queries, 2 ready + 1 unready endpoint, ` +
          `2 export records): median ${samples[100]!.toFixed(2)} ms, ` +
          `p95 ${samples[190]!.toFixed(2)} ms, max ${samples[199]!.toFixed(2)} ms`,
      );
    });

    it('follows a Deployment scaled up and down by the real EndpointSlice controller (A and SRV)', async () => {
      startAgents();
      const apps = c1.kc.makeApiClient(AppsV1Api);
      const core = c1.kc.makeApiClient(CoreV1Api);
      const labels = { app: 'api' };
      await apps.createNamespacedDeployment({
        namespace: ns,
        body: {
          metadata: { name: 'api', namespace: ns },
          spec: {
            replicas: 2,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                containers: [
                  { name: 'api', image: 'nginx', ports: [{ name: 'web', containerPort: 8080 }] },
                ],
              },
            },
          },
        },
      });
      await core.createNamespacedService({
        namespace: ns,
        body: {
          metadata: { name: 'api', namespace: ns },
          spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'web' }] },
        },
      });
      await c1.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        ...SE,
        namespace: ns,
        body: {
          apiVersion: 'multicluster.x-k8s.io/v1beta1',
          kind: 'ServiceExport',
          metadata: { name: 'api', namespace: ns },
        },
      });
      const name = `api.${ns}`;
      /** The ready pods' IPs once exactly `replicas` pods run (kwok gives them IPs). */
      const podIps = (replicas: number) =>
        waitFor(
          `${replicas} running api pods`,
          async () => {
            const pods = (
              await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=api' })
            ).items.filter((p) => p.metadata?.deletionTimestamp === undefined);
            const ips = pods
              .filter((p) =>
                p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
              )
              .map((p) => p.status?.podIP)
              .filter((ip): ip is string => ip !== undefined);
            return pods.length === replicas && ips.length === replicas ? ips.sort() : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        );
      const scaleTo = (replicas: number) =>
        apps.patchNamespacedDeploymentScale(
          { namespace: ns, name: 'api', body: { spec: { replicas } } },
          merge,
        );

      for (const replicas of [2, 4, 1]) {
        if (replicas !== 2) await scaleTo(replicas);
        const ips = await podIps(replicas);
        await untilA(name, ips);
        // Both sides sorted as strings of the same shape (`10.1.0.24:8080` sorts after `10.1.0.243:8080`).
        expect(await srvTargets(name)).toEqual(ips.map((ip) => `${ip}:8080`).sort());
        console.info(
          `dns: ${name} follows the Deployment at ${replicas} replicas: ${ips.join(' ')}`,
        );
      }
    });
  },
);

/** Round-trip times (ms) of `count` sequential A queries for `name`, each answered NOERROR. */
async function udpRoundTrips(server: string, name: string, count: number): Promise<number[]> {
  const [host, port] = [server.slice(0, server.lastIndexOf(':')), Number(server.split(':').pop())];
  const labels = name
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const question = Buffer.concat([...labels, Buffer.from([0, 0, 1, 0, 1])]);
  const socket = createSocket('udp4');
  const times: number[] = [];
  try {
    for (let id = 1; id <= count; id++) {
      const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
      const t0 = process.hrtime.bigint();
      const reply = await new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no DNS answer in 2 s')), 2_000);
        socket.once('message', (msg) => {
          clearTimeout(timer);
          resolve(msg);
        });
        socket.send(Buffer.concat([header, question]), port, host);
      });
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      expect(reply.readUInt16BE(0)).toBe(id);
      expect(reply.readUInt16BE(2) & 0x000f).toBe(0);
    }
  } finally {
    socket.close();
  }
  return times;
}
