// The chart's RBAC is sufficient and is all the agents get: both agents run against harness
// clusters exactly as the chart deploys them (its env, its ServiceAccounts, tokens minted for
// those accounts and bound only by the chart's roles), from the image trees (prune.sh) as
// uid 65532 on a read-only mount, and the export -> import scenario converges and unwinds.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import {
  CoordinationV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { serviceAccountKubeconfig, statusOf, waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { helmBinary, render } from './support/helm.js';
import { kubeRequest, ResourceMapper, serverSideApply } from './support/kube.js';
import {
  canSandbox,
  pruneAgents,
  spawnSandboxed,
  type Agent,
  type PrunedTrees,
} from './support/pruned.js';

interface Running {
  readonly agent: Agent;
  readonly child: ChildProcess;
  readonly logs: string[];
  readonly saKubeconfig: string;
  readonly env: Record<string, string>;
  /** The container ports the chart's probes and metrics Service use. */
  readonly probePort: number;
  readonly metricsTargetPort: number;
}

let trees: PrunedTrees;
let exporter: E2eCluster;
let importer: E2eCluster;
let release: TestNamespace;
let app: TestNamespace;
/** Test-only periods (docs/contributing.md#test-timings) as the agent's extraEnv entry. */
const testTimings = (timings: Record<string, number>) => ({
  name: 'MCS_TEST_TIMINGS',
  value: JSON.stringify(timings),
});

const running: Running[] = [];
const applied: { kc: KubeConfig; obj: KubernetesObject }[] = [];

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      server.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

/** Installs one agent with the chart (everything but the Deployment, which a kubelet would run). */
async function install(cluster: E2eCluster, agent: Agent): Promise<Running> {
  const ctx = e2eContext();
  const cloudMap = ctx.cloudMapEnv ?? {};
  const port = await freePort();
  const metricsPort = await freePort();
  const key = agent === 'export-agent' ? 'exportAgent' : 'importAgent';
  const other = agent === 'export-agent' ? 'importAgent' : 'exportAgent';
  const values = {
    aws: {
      region: cloudMap['AWS_REGION'] ?? 'us-east-1',
      cloudMapEndpoint: cloudMap['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '',
    },
    healthPort: port,
    metrics: { port: metricsPort },
    logLevel: 'debug',
    [other]: { enabled: false },
    [key]:
      agent === 'export-agent'
        ? { resyncSeconds: 2, extraEnv: [testTimings({ heartbeatSeconds: 5 })] }
        : {
            poll: { fastSeconds: 1 },
            extraEnv: [testTimings({ pollSlowSeconds: 1, pollResyncSeconds: 30 })],
          },
  };
  const out = render({ values, release: release.name, namespace: release.name });
  expect(out.status, out.stderr).toBe(0);
  const mapper = new ResourceMapper(cluster.kc);
  let deployment: V1Deployment | undefined;
  for (const obj of out.objects) {
    if (obj.kind === 'Deployment') {
      deployment = obj as V1Deployment;
      continue;
    }
    const res = await serverSideApply(cluster.kc, mapper, obj, { dryRun: false });
    expect(res.status, `${obj.kind}/${obj.metadata?.name ?? ''}: ${res.body}`).toBeLessThan(300);
    applied.push({ kc: cluster.kc, obj });
  }
  if (deployment === undefined) throw new Error(`the chart rendered no ${agent} Deployment`);
  const pod = deployment.spec?.template.spec;
  const serviceAccount = pod?.serviceAccountName ?? '';
  expect(
    out.objects.some((o) => o.kind === 'ServiceAccount' && o.metadata?.name === serviceAccount),
  ).toBe(true);

  // A bound token for the chart's ServiceAccount: the agent holds exactly the chart's RBAC.
  const saKubeconfig = join(trees.root, `${agent}.kubeconfig`);
  writeFileSync(
    saKubeconfig,
    await serviceAccountKubeconfig(cluster.kc, {
      namespace: release.name,
      serviceAccount,
      expirationSeconds: 3600,
    }),
  );
  chmodSync(saKubeconfig, 0o644);

  // The container's environment as the kubelet would give it.
  const env: Record<string, string> = {
    HOME: '/nonexistent',
    KUBECONFIG: saKubeconfig,
    AWS_ACCESS_KEY_ID: cloudMap['AWS_ACCESS_KEY_ID'] ?? 'test',
    AWS_SECRET_ACCESS_KEY: cloudMap['AWS_SECRET_ACCESS_KEY'] ?? 'test',
  };
  for (const e of pod?.containers[0]?.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.name') env[e.name] = `${agent}-7f9c-x1`;
    else if (field === 'metadata.namespace') env[e.name] = release.name;
    else if (e.value !== undefined) env[e.name] = e.value;
  }
  const child = spawnSandboxed(trees, agent, pod?.containers[0]?.args ?? [], env);
  const logs: string[] = [];
  // Chunks do not end at line ends: keep the unfinished tail of each stream until its newline,
  // so a log line is matched (and reported) whole.
  const collector = (): ((chunk: Buffer) => void) => {
    let tail = '';
    return (chunk) => {
      const lines = (tail + chunk.toString()).split('\n');
      tail = lines.pop() ?? '';
      logs.push(...lines.filter((l) => l !== ''));
    };
  };
  child.stdout?.on('data', collector());
  child.stderr?.on('data', collector());
  // Where the chart points the probes and the metrics Service (by port name).
  const ports = new Map(
    (pod?.containers[0]?.ports ?? []).map((p) => [p.name ?? '', p.containerPort]),
  );
  const service = out.objects.find((o) => o.kind === 'Service') as
    (KubernetesObject & { spec: { ports: { targetPort: string }[] } }) | undefined;
  const probe = pod?.containers[0]?.readinessProbe?.httpGet?.port;
  const r: Running = {
    agent,
    child,
    logs,
    saKubeconfig,
    env,
    probePort: ports.get(String(probe)) ?? -1,
    metricsTargetPort: ports.get(service?.spec.ports[0]?.targetPort ?? '') ?? -1,
  };
  running.push(r);
  return r;
}

async function stop(r: Running): Promise<number | null> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return r.child.exitCode;
  const exited = new Promise<number | null>((resolve) =>
    r.child.once('exit', (code) => resolve(code)),
  );
  r.child.kill('SIGTERM');
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** Distinct permission errors in an agent's log (shortened). */
const forbidden = (r: Running): string[] => [
  ...new Set(
    r.logs
      .filter((l) => /forbidden|\b403\b/i.test(l))
      .map((l) => {
        const m = /cannot (\w+) resource (\S+) in API group (\S*)/.exec(l.replace(/[\\"]/g, ''));
        return m === null
          ? l.slice(0, 300)
          : `cannot ${m[1] ?? ''} ${m[2] ?? ''} in group '${m[3] ?? ''}'`;
      }),
  ),
];

beforeAll(async () => {
  expect(canSandbox(), 'needs unshare -m and setpriv (run as root)').toBe(true);
  const ctx = e2eContext();
  expect(ctx.cloudMapEnv, 'the harness must run the Cloud Map emulator').not.toBeNull();
  const clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  [exporter, importer] = clusters as [E2eCluster, E2eCluster];
  helmBinary();
  trees = pruneAgents(['export-agent', 'import-agent']);
  release = await e2eNamespace('mcs-rel', [exporter, importer]);
  app = await e2eNamespace('mcs-app', [exporter, importer]);
}, 900_000);

afterAll(async () => {
  for (const r of running) await stop(r);
  for (const { kc, obj } of applied.reverse()) {
    if (obj.metadata?.namespace !== undefined) continue; // goes with the namespace
    const mapper = new ResourceMapper(kc);
    await kubeRequest(kc, 'DELETE', await mapper.path(obj));
  }
  await app?.delete();
  await release?.delete();
  trees?.cleanup();
});

describe('agents running as the chart deploys them', () => {
  let exp: Running;
  let imp: Running;

  it('start with the chart ServiceAccounts and become leaders through the chart Role', async () => {
    exp = await install(exporter, 'export-agent');
    imp = await install(importer, 'import-agent');
    for (const [r, cluster] of [
      [exp, exporter],
      [imp, importer],
    ] as const) {
      const leases = cluster.kc.makeApiClient(CoordinationV1Api);
      const name = r.env['MCS_LEASE_NAME'] ?? '';
      await waitFor(
        `${r.agent} holds Lease ${release.name}/${name}`,
        async () => {
          if (r.child.exitCode !== null)
            throw new Error(`${r.agent} exited ${String(r.child.exitCode)}:\n${r.logs.join('\n')}`);
          try {
            const lease = await leases.readNamespacedLease({ namespace: release.name, name });
            return lease.spec?.holderIdentity === `${r.agent}-7f9c-x1`;
          } catch (err) {
            if (statusOf(err) === 404) return false;
            throw err;
          }
        },
        { timeoutMs: 60_000 },
      );
    }
  });

  it('holds no more than the chart grants (a token is not an admin)', async () => {
    const { loadKubeconfig } = await import('@cloudmap-mcs/e2e');
    const expKc = loadKubeconfig(exp.saKubeconfig);
    const impKc = loadKubeconfig(imp.saKubeconfig);
    const denied = async (kc: KubeConfig, method: string, path: string, body?: unknown) =>
      (await kubeRequest(kc, method, path, body === undefined ? undefined : JSON.stringify(body)))
        .status;
    expect(await denied(expKc, 'GET', `/api/v1/namespaces/${release.name}/secrets`)).toBe(403);
    expect(await denied(expKc, 'GET', `/apis/multicluster.x-k8s.io/v1beta1/serviceimports`)).toBe(
      403,
    );
    expect(
      await denied(expKc, 'POST', `/api/v1/namespaces/${app.name}/services`, {
        metadata: { name: 'x' },
        spec: { ports: [{ port: 1 }] },
      }),
    ).toBe(403);
    // The import agent reads ServiceExports (own-cluster records) but never writes them.
    expect(
      await denied(
        impKc,
        'POST',
        `/apis/multicluster.x-k8s.io/v1beta1/namespaces/${app.name}/serviceexports`,
        {
          apiVersion: 'multicluster.x-k8s.io/v1beta1',
          kind: 'ServiceExport',
          metadata: { name: 'x' },
        },
      ),
    ).toBe(403);
    expect(await denied(impKc, 'GET', `/api/v1/namespaces/${release.name}/secrets`)).toBe(403);
    expect(await denied(impKc, 'GET', `/api/v1/pods`)).toBe(403);
  });

  it('converges: a ServiceExport in one cluster becomes a ServiceImport with endpoints in the other', async () => {
    const core = exporter.kc.makeApiClient(CoreV1Api);
    const discovery = exporter.kc.makeApiClient(DiscoveryV1Api);
    const custom = exporter.kc.makeApiClient(CustomObjectsApi);
    await core.createNamespacedService({
      namespace: app.name,
      body: {
        metadata: { name: 'web' },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: app.name,
      body: {
        metadata: {
          name: 'web-1',
          labels: {
            'kubernetes.io/service-name': 'web',
            'endpointslice.kubernetes.io/managed-by': 'deploy-test',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.61.0.11'], conditions: { ready: true } },
          { addresses: ['10.61.0.12'], conditions: { ready: true } },
        ],
      },
    });
    await custom.createNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: app.name,
      plural: 'serviceexports',
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'web' },
      },
    });

    // Export side: finalizer (ServiceExport patch) and conditions (status patch).
    await waitFor(
      'ServiceExport web Valid=True with the agent finalizer',
      async () => {
        const se = (await custom.getNamespacedCustomObject({
          group: 'multicluster.x-k8s.io',
          version: 'v1beta1',
          namespace: app.name,
          plural: 'serviceexports',
          name: 'web',
        })) as {
          metadata: { finalizers?: string[] };
          status?: { conditions?: { type: string; status: string }[] };
        };
        return (
          (se.metadata.finalizers ?? []).length > 0 &&
          (se.status?.conditions ?? []).some((c) => c.type === 'Valid' && c.status === 'True')
        );
      },
      { timeoutMs: 120_000 },
    );

    // Import side: ServiceImport, derived Service and EndpointSlices with both addresses.
    const icustom = importer.kc.makeApiClient(CustomObjectsApi);
    const idiscovery = importer.kc.makeApiClient(DiscoveryV1Api);
    await waitFor(
      'ServiceImport web with the exported endpoints in the importing cluster',
      async () => {
        if (imp.child.exitCode !== null)
          throw new Error(`import agent exited:\n${imp.logs.join('\n')}`);
        try {
          const si = (await icustom.getNamespacedCustomObject({
            group: 'multicluster.x-k8s.io',
            version: 'v1beta1',
            namespace: app.name,
            plural: 'serviceimports',
            name: 'web',
          })) as { spec?: { ports?: { port: number }[]; type?: string } };
          if (!(si.spec?.ports ?? []).some((p) => p.port === 80)) return false;
        } catch (err) {
          if (statusOf(err) === 404) return false;
          throw err;
        }
        const slices = await idiscovery.listNamespacedEndpointSlice({
          namespace: app.name,
          labelSelector: 'multicluster.kubernetes.io/service-name=web',
        });
        const addresses = slices.items
          .flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses))
          .sort();
        return addresses.join(',') === '10.61.0.11,10.61.0.12';
      },
      { timeoutMs: 120_000 },
    );
    const services = await importer.kc.makeApiClient(CoreV1Api).listNamespacedService({
      namespace: app.name,
      labelSelector: 'multicluster.kubernetes.io/service-name=web',
    });
    expect(services.items.length).toBeGreaterThanOrEqual(1);
  });

  it('unwinds: deleting the ServiceExport removes the import everywhere', async () => {
    const custom = exporter.kc.makeApiClient(CustomObjectsApi);
    await custom.deleteNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: app.name,
      plural: 'serviceexports',
      name: 'web',
    });
    const gone = async (kc: KubeConfig, plural: string) => {
      try {
        await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group: 'multicluster.x-k8s.io',
          version: 'v1beta1',
          namespace: app.name,
          plural,
          name: 'web',
        });
        return false;
      } catch (err) {
        if (statusOf(err) === 404) return true;
        throw err;
      }
    };
    await waitFor(
      'ServiceExport web finalized and gone',
      () => gone(exporter.kc, 'serviceexports'),
      { timeoutMs: 120_000 },
    );
    await waitFor(
      'ServiceImport web gone from the importing cluster',
      () => gone(importer.kc, 'serviceimports'),
      {
        timeoutMs: 120_000,
      },
    );
  });

  it('answer the chart probes and serve metrics where the chart metrics Service points', async () => {
    for (const r of [exp, imp]) {
      expect(r.probePort, r.agent).toBeGreaterThan(0);
      for (const path of ['/healthz', '/readyz']) {
        const res = await fetch(`http://127.0.0.1:${String(r.probePort)}${path}`);
        expect(res.status, `${r.agent} ${path}: ${await res.text()}`).toBe(200);
      }
      const metrics = await fetch(`http://127.0.0.1:${String(r.metricsTargetPort)}/metrics`);
      expect(metrics.status, r.agent).toBe(200);
      expect(await metrics.text()).toMatch(/^# (HELP|TYPE) /m);
    }
  });

  it('never hit a permission error, and both stop cleanly on SIGTERM', async () => {
    expect(forbidden(exp)).toEqual([]);
    expect(forbidden(imp)).toEqual([]);
    expect(await stop(exp)).toBe(0);
    expect(await stop(imp)).toBe(0);
  });
});
