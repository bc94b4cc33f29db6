// The clusterset change feed (ADR 0018) end to end: the export agent of c1 and the import agent
// of c2 as real processes at their production polling defaults, on harness clusters and the
// emulator. The importer reaches Cloud Map through a counting proxy, so the test sees every call
// it makes by operation and service: a new export is imported without waiting for the listing,
// and at idle no feed-covered service gets a revision check of its own.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { FEED_NAMESPACE_NAME } from '@cloudmap-mcs/core';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProcess } from './int-helpers.js';

const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };
const IDLE_SECONDS = 30;

let c1: E2eCluster;
let c2: E2eCluster;
let ns: TestNamespace;
let proxy: Server;
const agents: AgentProcess[] = [];
/** Every call the importer made: `<Operation> <namespace>/<service>`. */
const calls: string[] = [];

/** Forwards the agent's Cloud Map calls to the emulator, recording what each one asked for. */
async function startCountingProxy(target: string): Promise<string> {
  const body = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  proxy = createServer((req, res) => {
    void (async () => {
      const payload = await body(req);
      const op = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '?';
      let where = '';
      try {
        const json = JSON.parse(payload.toString() || '{}') as Record<string, unknown>;
        if (typeof json['NamespaceName'] === 'string')
          where = ` ${json['NamespaceName']}/${String(json['ServiceName'])}`;
      } catch {
        // not JSON: counted by operation only
      }
      calls.push(`${op}${where}`);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const answer = await fetch(`${target}${req.url ?? '/'}`, {
        method: req.method ?? 'POST',
        headers,
        body: payload,
      });
      const out = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
      res.end(out);
    })().catch((error: unknown) => {
      res.writeHead(502);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${String((proxy.address() as AddressInfo).port)}`;
}

async function exportService(name: string): Promise<void> {
  const core = c1.kc.makeApiClient(CoreV1Api);
  await core.createNamespacedService({
    namespace: ns.name,
    body: {
      metadata: { name },
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
    },
  });
  await c1.kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace: ns.name,
    body: {
      metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      endpoints: [{ addresses: ['10.1.0.7'], conditions: { ready: true } }],
    },
  });
  await c1.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...SE,
    namespace: ns.name,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name },
    },
  });
}

/** Resolves once c2 has the ServiceImport and c1's endpoint of `name`. */
async function importedInC2(name: string, timeoutMs: number): Promise<void> {
  await waitFor(
    `${name} imported in c2`,
    async () => {
      try {
        await c2.kc
          .makeApiClient(CustomObjectsApi)
          .getNamespacedCustomObject({ ...SI, namespace: ns.name, name });
      } catch {
        return false;
      }
      const slices = await c2.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
        namespace: ns.name,
        labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
      });
      return slices.items.some((s) => (s.endpoints ?? []).length > 0);
    },
    { timeoutMs, intervalMs: 50 },
  );
}

const byOperation = (list: readonly string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const c of list) {
    const op = c.split(' ')[0] ?? '?';
    out[op] = (out[op] ?? 0) + 1;
  }
  return out;
};

beforeAll(async () => {
  const clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [c1, c2] = [clusters[0]!, clusters[1]!];
  const env = e2eContext().cloudMapEnv;
  if (env === null) throw new Error('this suite needs the Cloud Map emulator');
  ns = await e2eNamespace('feed');
  const endpoint = env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  if (endpoint === undefined) throw new Error('no emulator endpoint in the e2e context');
  const proxied = { ...env, AWS_ENDPOINT_URL_SERVICEDISCOVERY: await startCountingProxy(endpoint) };
  // Production polling defaults on both sides: only the cluster, identity and election flags.
  // A clusterset of its own: the other suites run agents for the same harness clusters (the
  // same cluster ids) and leave their exports in c1, and their export agents would write this
  // feed's records, which no production clusterset sees (one export agent leads per cluster).
  const identity = (cluster: string) => [
    '--clusterset-id',
    `feedtest-${ns.name}`,
    '--cluster-id',
    `feedtest-${cluster}`,
  ];
  const exporter = new AgentProcess(
    'feed-export-c1',
    ['--leader-elect=false', ...identity('c1')],
    { ...env, KUBECONFIG: c1.kubeconfigPath },
    'export',
  );
  const importer = new AgentProcess('feed-import-c2', ['--leader-elect=false', ...identity('c2')], {
    ...proxied,
    KUBECONFIG: c2.kubeconfigPath,
  });
  for (const a of [exporter, importer]) {
    await a.start();
    agents.push(a);
  }
}, 180_000);

afterAll(async () => {
  for (const a of agents) await a.stop();
  await new Promise<void>((resolve) =>
    proxy === undefined ? resolve() : proxy.close(() => resolve()),
  );
  await ns?.delete({ wait: false });
});

describe('change feed: export agent (c1) → _mcs-feed → import agent (c2)', () => {
  it('imports a new export in c2 without the listing, and idles on the feed alone', async () => {
    for (const name of ['alpha', 'beta', 'gamma']) await exportService(name);
    // Generous limits for a loaded 2-core machine; the figures printed are what matters.
    for (const name of ['alpha', 'beta', 'gamma']) await importedInC2(name, 150_000);

    // A new export once everything is synced: the feed names it, the importer reads it at once.
    const listingsBefore = calls.filter((c) => c.startsWith('ListServices')).length;
    const started = Date.now();
    await exportService('delta');
    await importedInC2('delta', 150_000);
    const latencyMs = Date.now() - started;
    const listingsDuring =
      calls.filter((c) => c.startsWith('ListServices')).length - listingsBefore;
    console.log(
      `new export delta imported in c2 after ${String(latencyMs)} ms ` +
        `(ServiceExport created → ServiceImport and endpoints in c2; ${String(listingsDuring)} listing(s) meanwhile)`,
    );
    // It was read because the feed named it: a read of delta follows a read of the feed.
    const readDelta = calls.indexOf(`DiscoverInstances ${ns.name}/delta`);
    expect(readDelta).toBeGreaterThan(0);
    expect(
      calls
        .slice(0, readDelta)
        .some((c) => c.startsWith(`DiscoverInstances ${FEED_NAMESPACE_NAME}/`)),
    ).toBe(true);

    // Idle: let the writes settle, then count every call over the window.
    await new Promise((r) => setTimeout(r, 5_000));
    const from = calls.length;
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const idle = calls.slice(from);
    const perMinute = Object.fromEntries(
      Object.entries(byOperation(idle)).map(([op, n]) => [op, Math.round((n * 60) / IDLE_SECONDS)]),
    );
    const total = Math.round((idle.length * 60) / IDLE_SECONDS);
    console.log(
      `import agent c2 idle over ${String(IDLE_SECONDS)} s: ${String(total)} Cloud Map calls/min`,
      perMinute,
    );
    console.log('idle calls by service:', byOperationAndService(idle));
    // Feed-covered services get no revision check of their own; the feed's revision is polled.
    for (const name of ['alpha', 'beta', 'gamma', 'delta'])
      expect(idle.filter((c) => c === `DiscoverInstancesRevision ${ns.name}/${name}`)).toEqual([]);
    expect(
      idle.some((c) => c.startsWith(`DiscoverInstancesRevision ${FEED_NAMESPACE_NAME}/`)),
    ).toBe(true);
  }, 600_000);
});

function byOperationAndService(list: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of list) out[c] = (out[c] ?? 0) + 1;
  return out;
}
