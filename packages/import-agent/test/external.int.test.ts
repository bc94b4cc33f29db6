// Issue 17 item 2 "Done when": a service registered directly in Cloud Map (the emulator, through
// the AWS SDK as ECS would), with one unhealthy instance, appears as a ServiceImport whose
// slices serve the healthy instances only, and disappears when the user's selection is
// removed. The import agent is a real process on a harness cluster (ADR 0014).
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { derivedServiceName, type ClusterExport } from '@cloudmap-mcs/core';
import {
  ecsLikeService,
  waitFor,
  type EcsLikeService,
  type TestNamespace,
} from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { props } from './cloudmap-fixtures.js';
import { AgentProcess, Publisher, testCloudMap } from './int-helpers.js';

const CLUSTERSET = 'e2e-clusterset';
const suffix = Math.random().toString(36).slice(2, 7);
const CM_NS = `ecs-int-${suffix}`;
let cluster: E2eCluster;
let ns: TestNamespace;
let agent: AgentProcess;
let ecs: EcsLikeService;
let publisher: Publisher;

const group = {
  group: 'multicluster.cloudmap-mcs.io',
  version: 'v1alpha1',
  plural: 'cloudmapserviceimports',
};

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Selected {
  status?: {
    observedGeneration?: number;
    instances?: { healthy: number; unhealthy: number; refused: number };
    conditions?: Condition[];
  };
}

async function select(
  kc: KubeConfig,
  name: string,
  cloudMap: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...group,
    namespace: ns.name,
    body: {
      apiVersion: 'multicluster.cloudmap-mcs.io/v1alpha1',
      kind: 'CloudMapServiceImport',
      metadata: { name },
      spec: { cloudMap, ...extra },
    },
  });
}
async function selected(kc: KubeConfig, name: string): Promise<Selected | undefined> {
  try {
    return (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...group, namespace: ns.name, name })) as Selected;
  } catch {
    return undefined;
  }
}
const readyOf = (s: Selected | undefined) => s?.status?.conditions?.find((c) => c.type === 'Ready');

async function serviceImport(kc: KubeConfig, name: string) {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: ns.name,
      plural: 'serviceimports',
      name,
    })) as {
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec: { ports: { name?: string; port: number; protocol: string }[]; ips?: string[] };
      status?: { clusters?: { cluster: string }[] };
    };
  } catch {
    return undefined;
  }
}
async function slices(kc: KubeConfig, name: string) {
  const list = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace: ns.name,
    labelSelector: `multicluster.kubernetes.io/service-name=${name}`,
  });
  return list.items;
}
/** `address:port` of every endpoint of the import's slices, sorted. */
async function endpointPorts(kc: KubeConfig, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const s of await slices(kc, name))
    for (const e of s.endpoints ?? [])
      for (const a of e.addresses)
        for (const p of s.ports ?? []) out.push(`${a}:${p.name ?? ''}/${p.port}`);
  return out.sort();
}
/** address → ready, over every slice of the import. */
async function endpointStates(kc: KubeConfig, name: string): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const s of await slices(kc, name))
    for (const e of s.endpoints ?? [])
      for (const a of e.addresses) out[a] = e.conditions?.ready ?? true;
  return out;
}

beforeAll(async () => {
  const ctx = e2eContext();
  cluster = e2eClusters()[0]!;
  const env = ctx.cloudMapEnv;
  if (env === null) throw new Error('this suite needs the Cloud Map emulator (MCS_E2E_EMULATOR)');
  ns = await e2eNamespace('external');
  ecs = await ecsLikeService(env, CM_NS, 'payments');
  await ecs.register({
    id: 'task-a',
    ipv4: '10.60.0.1',
    port: 8080,
    healthy: true,
    zone: 'us-east-1a',
  });
  await ecs.register({
    id: 'task-b',
    ipv4: '10.60.0.2',
    port: 8080,
    healthy: true,
    zone: 'us-east-1b',
  });
  await ecs.register({ id: 'task-c', ipv4: '10.60.0.3', port: 8080, healthy: false });
  // Hostile: the instance metadata address is never imported (link-local, always refused);
  // nor is an address outside the agent's --allowed-cidrs.
  await ecs.register({ id: 'task-evil', ipv4: '169.254.169.254', port: 80, healthy: true });
  await ecs.register({ id: 'task-outside', ipv4: '192.168.7.7', port: 8080, healthy: true });
  publisher = new Publisher(testCloudMap(env));
  agent = new AgentProcess(
    `import-external-${cluster.name}`,
    ['--leader-elect=false', '--poll-fast-seconds', '1', '--allowed-cidrs', '10.60.0.0/16'],
    {
      ...env,
      KUBECONFIG: cluster.kubeconfigPath,
      MCS_TEST_TIMINGS: JSON.stringify({ pollSlowSeconds: 2, externalPollSeconds: 1 }),
    },
  );
  await agent.start();
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  await publisher?.unpublish(CM_NS, 'exported', 'r9').catch(() => undefined);
  await publisher?.unpublish(CM_NS, 'by-aws-controller', 'legacy').catch(() => undefined);
  for (const id of ['task-a', 'task-b', 'task-c', 'task-evil', 'task-outside'])
    await ecs?.deregister(id).catch(() => undefined);
  ecs?.close();
  await ns?.delete({ wait: false });
});

describe('import of a non-Kubernetes Cloud Map service (CloudMapServiceImport)', () => {
  it('imports the healthy instances as ready endpoints, follows health, and goes when the selection is removed', async () => {
    const kc = cluster.kc;
    await select(kc, 'payments', { namespace: CM_NS, service: 'payments' });
    await waitFor(
      'ServiceImport with slices of the healthy instances',
      async () => {
        const states = await endpointStates(kc, 'payments');
        return states['10.60.0.1'] === true && states['10.60.0.2'] === true;
      },
      { timeoutMs: 60_000 },
    );
    const si = await serviceImport(kc, 'payments');
    expect(si?.metadata.labels?.['multicluster.cloudmap-mcs.io/external']).toBe('true');
    expect(si?.metadata.annotations?.['multicluster.cloudmap-mcs.io/cloud-map-service']).toBe(
      `${CM_NS}/payments`,
    );
    expect(si?.spec.ports).toEqual([{ port: 8080, protocol: 'TCP' }]);
    const states = await endpointStates(kc, 'payments');
    // The unhealthy task is listed not ready (as an unready pod is); the link-local one and the
    // one outside --allowed-cidrs not at all.
    expect(states).toEqual({ '10.60.0.1': true, '10.60.0.2': true, '10.60.0.3': false });
    const ready = Object.entries(states)
      .filter(([, r]) => r)
      .map(([a]) => a)
      .sort();
    expect(ready).toEqual(['10.60.0.1', '10.60.0.2']);
    const all = await slices(kc, 'payments');
    expect(
      new Set(all.map((s) => s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'])),
    ).toEqual(new Set([`cloudmap.${CM_NS}.payments`]));
    expect(si?.status?.clusters).toEqual([{ cluster: `cloudmap.${CM_NS}.payments` }]);
    expect(
      all
        .flatMap((s) => (s.endpoints ?? []).map((e) => e.zone))
        .filter(Boolean)
        .sort(),
    ).toEqual(['us-east-1a', 'us-east-1b']);
    await waitFor('status counts', async () => {
      const s = await selected(kc, 'payments');
      return readyOf(s)?.status === 'True' && s?.status?.instances?.refused === 2;
    });
    expect((await selected(kc, 'payments'))?.status?.instances).toEqual({
      healthy: 2,
      unhealthy: 1,
      refused: 2,
    });

    // ECS reports the task healthy: it becomes ready; another turns unhealthy: it stops being ready.
    await ecs.setHealth('task-c', true);
    await ecs.setHealth('task-a', false);
    await waitFor('health followed', async () => {
      const now = await endpointStates(kc, 'payments');
      return now['10.60.0.3'] === true && now['10.60.0.1'] === false && now['10.60.0.2'] === true;
    });

    // The user's selection removed: ServiceImport, derived Service and slices go.
    await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      ...group,
      namespace: ns.name,
      name: 'payments',
    });
    await waitFor(
      'import removed',
      async () =>
        (await serviceImport(kc, 'payments')) === undefined &&
        (await slices(kc, 'payments')).length === 0,
    );
    const derived = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ namespace: ns.name, name: derivedServiceName(ns.name, 'payments') })
      .catch(() => undefined);
    expect(derived).toBeUndefined();
  });

  it('a missing service, an MCS-exported service and a bad spec each say why in the Ready condition and import nothing', async () => {
    const kc = cluster.kc;
    // Records written by an export agent (ours), in the same Cloud Map namespace.
    const exp: ClusterExport = {
      namespace: CM_NS,
      name: 'exported',
      cluster: { clusterId: 'r9', clustersetId: CLUSTERSET },
      properties: props(),
      endpoints: [
        {
          address: '10.61.0.1',
          addressType: 'IPv4',
          ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
          conditions: { ready: true, serving: true, terminating: false },
        },
      ],
      hasExportRecord: true,
    };
    await publisher.publish(exp);
    // Records as the AWS Go controller writes them (no MCS_RECORD, its K8S_CONTROLLER value).
    await publisher.register(CM_NS, 'by-aws-controller', 'tcp-10_61_0_2-8080', {
      AWS_INSTANCE_IPV4: '10.61.0.2',
      AWS_INSTANCE_PORT: '8080',
      CLUSTER_ID: 'legacy',
      CLUSTERSET_ID: CLUSTERSET,
      ENDPOINT_PORT_NAME: 'http',
      ENDPOINT_PROTOCOL: 'TCP',
      SERVICE_PORT_NAME: 'http',
      SERVICE_PORT: '80',
      SERVICE_TARGET_PORT: '8080',
      SERVICE_PROTOCOL: 'TCP',
      SERVICE_TYPE: 'ClusterSetIP',
      SERVICE_EXPORT_CREATION_TIMESTAMP: '1700000000000',
      READY: 'true',
      HOSTNAME: '',
      NODENAME: 'ip-10-61-0-2',
      K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s v0.3.1 (abc1234)',
    });
    await select(kc, 'missing', { namespace: CM_NS, service: 'no-such-service' });
    await select(kc, 'twice', { namespace: CM_NS, service: 'exported' });
    await select(kc, 'twice-aws', { namespace: CM_NS, service: 'by-aws-controller' });
    // Valid for the CRD schema, refused by the agent: two unnamed ports.
    await select(
      kc,
      'badports',
      { namespace: CM_NS, service: 'payments' },
      {
        ports: [{ port: 80 }, { port: 81 }],
      },
    );
    const reasons = async () =>
      Promise.all(
        ['missing', 'twice', 'twice-aws', 'badports'].map(
          async (n) => readyOf(await selected(kc, n))?.reason,
        ),
      );
    await waitFor('four refusals', async () => {
      const [a, b, c, d] = await reasons();
      return (
        a === 'ServiceNotFound' &&
        b === 'ExportedByKubernetes' &&
        c === 'ExportedByKubernetes' &&
        d === 'InvalidSpec'
      );
    });
    for (const name of ['missing', 'twice', 'twice-aws', 'badports']) {
      expect(readyOf(await selected(kc, name))?.status).toBe('False');
      expect(await serviceImport(kc, name)).toBeUndefined();
    }
  });

  it('a declared port is the Service port; each endpoint keeps its instance port', async () => {
    const kc = cluster.kc;
    await select(
      kc,
      'payments-http',
      { namespace: CM_NS, service: 'payments' },
      { ports: [{ name: 'http', port: 80 }] },
    );
    await waitFor(
      'declared-port import',
      async () => (await endpointPorts(kc, 'payments-http')).length === 3,
    );
    const si = await serviceImport(kc, 'payments-http');
    expect(si?.spec.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP' }]);
    expect(await endpointPorts(kc, 'payments-http')).toEqual([
      '10.60.0.1:http/8080',
      '10.60.0.2:http/8080',
      '10.60.0.3:http/8080',
    ]);
    await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      ...group,
      namespace: ns.name,
      name: 'payments-http',
    });
    await waitFor(
      'declared-port import removed',
      async () => (await serviceImport(kc, 'payments-http')) === undefined,
    );
  });
});
