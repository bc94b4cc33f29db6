/**
 * The demo's non-Kubernetes service (issue 17 item 2, ADR 0014): three "ECS tasks" registered
 * straight into the emulator with the AWS SDK, one of them unhealthy, then a
 * CloudMapServiceImport in each cluster selecting them. The step waits until both clusters
 * import the healthy tasks as ready endpoints (the unhealthy one not ready) and returns what
 * it read, for the summary.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ecsLikeService, type EcsTask } from '../ecs-like.js';
import { statusOf } from '../resources.js';

export const EXTERNAL = { cloudMapNamespace: 'ecs-apps', service: 'payments' } as const;

export const TASKS_V4: EcsTask[] = [
  { id: 'task-1', ipv4: '10.200.0.11', port: 8080, healthy: true, zone: 'us-east-1a' },
  { id: 'task-2', ipv4: '10.200.0.12', port: 8080, healthy: true, zone: 'us-east-1b' },
  { id: 'task-3', ipv4: '10.200.0.13', port: 8080, healthy: false, zone: 'us-east-1c' },
];
// IPv6-only clusters serve no IPv4 Service
// (docs/import-agent.md#ip-families-dual-stack-and-ipv6-only-clusters): there the tasks are
// IPv6, as ECS tasks in an IPv6-only subnet are.
export const TASKS_V6: EcsTask[] = TASKS_V4.map(({ ipv4, ...t }) => ({
  ...t,
  ipv6: `fd00:200::${(ipv4 ?? '').split('.').pop() ?? ''}`,
}));
const addressOf = (t: EcsTask): string => t.ipv4 ?? t.ipv6 ?? '';
/** The tasks' subnets, which the import agents must allow (`importAgent.allowedCidrs`). */
export const EXTERNAL_TASK_CIDRS = ['10.200.0.0/16', 'fd00:200::/64'] as const;

export interface ExternalObservation {
  cluster: string;
  ready: string[];
  notReady: string[];
  sourceClusters: string[];
  condition: string;
}

export interface ExternalResult {
  observations: ExternalObservation[];
  /** The summary's lines, from what was read. */
  lines: string[];
}

async function observe(
  cluster: string,
  kc: KubeConfig,
  namespace: string,
): Promise<ExternalObservation> {
  const slices = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace,
    labelSelector: `multicluster.kubernetes.io/service-name=${EXTERNAL.service}`,
  });
  const ready: string[] = [];
  const notReady: string[] = [];
  const sources = new Set<string>();
  for (const s of slices.items) {
    const src = s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'];
    if (src !== undefined) sources.add(src);
    for (const e of s.endpoints ?? [])
      (e.conditions?.ready === false ? notReady : ready).push(...e.addresses);
  }
  let condition = 'no status yet';
  try {
    const obj = (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'multicluster.cloudmap-mcs.io',
      version: 'v1alpha1',
      namespace,
      plural: 'cloudmapserviceimports',
      name: EXTERNAL.service,
    })) as { status?: { conditions?: { type: string; reason: string; message: string }[] } };
    const c = obj.status?.conditions?.find((x) => x.type === 'Ready');
    if (c !== undefined) condition = `${c.reason}: ${c.message}`;
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
  return {
    cluster,
    ready: ready.sort(),
    notReady: notReady.sort(),
    sourceClusters: [...sources],
    condition,
  };
}

export async function showExternalService(opts: {
  env: Readonly<Record<string, string>>;
  clusters: readonly { name: string; kc: KubeConfig }[];
  namespace: string;
  deadline: number;
  signal: AbortSignal;
  say: (m: string) => void;
  /** The clusters' families: IPv6-only clusters get IPv6 tasks. */
  ipv6Only?: boolean;
}): Promise<ExternalResult> {
  const TASKS = opts.ipv6Only === true ? TASKS_V6 : TASKS_V4;
  const ecs = await ecsLikeService(opts.env, EXTERNAL.cloudMapNamespace, EXTERNAL.service);
  try {
    for (const t of TASKS) await ecs.register(t);
  } finally {
    ecs.close();
  }
  opts.say(
    `registered ${TASKS.length} ECS-style tasks in Cloud Map ${EXTERNAL.cloudMapNamespace}/${EXTERNAL.service} with the AWS SDK (${TASKS.filter((t) => !t.healthy).length} unhealthy)`,
  );
  for (const c of opts.clusters) {
    await c.kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'multicluster.cloudmap-mcs.io',
      version: 'v1alpha1',
      namespace: opts.namespace,
      plural: 'cloudmapserviceimports',
      body: {
        apiVersion: 'multicluster.cloudmap-mcs.io/v1alpha1',
        kind: 'CloudMapServiceImport',
        metadata: { name: EXTERNAL.service },
        spec: { cloudMap: { namespace: EXTERNAL.cloudMapNamespace, service: EXTERNAL.service } },
      },
    });
  }
  opts.say(
    `created CloudMapServiceImport ${opts.namespace}/${EXTERNAL.service} in ${opts.clusters.map((c) => c.name).join(' and ')}`,
  );
  const healthy = TASKS.filter((t) => t.healthy)
    .map(addressOf)
    .sort();
  const unhealthy = TASKS.filter((t) => !t.healthy)
    .map(addressOf)
    .sort();
  let observations: ExternalObservation[] = [];
  for (;;) {
    observations = await Promise.all(
      opts.clusters.map((c) => observe(c.name, c.kc, opts.namespace)),
    );
    const done = observations.every(
      (o) =>
        JSON.stringify(o.ready) === JSON.stringify(healthy) &&
        JSON.stringify(o.notReady) === JSON.stringify(unhealthy),
    );
    if (done) break;
    if (Date.now() > opts.deadline)
      throw new Error(
        `the non-Kubernetes service was not imported as expected (ready ${healthy.join(',')}, not ready ${unhealthy.join(',')}): ${observations.map((o) => `${o.cluster}: ready [${o.ready.join(',')}] not ready [${o.notReady.join(',')}] (${o.condition})`).join('; ')}`,
      );
    await sleep(500, undefined, { signal: opts.signal });
  }
  const lines = renderExternal(opts.namespace, TASKS.length, observations);
  return { observations, lines };
}

/** The summary's lines (pure), from what the clusters hold. */
export function renderExternal(
  namespace: string,
  tasks: number,
  observations: readonly ExternalObservation[],
): string[] {
  return [
    `External   ${EXTERNAL.cloudMapNamespace}/${EXTERNAL.service}: ${tasks} tasks registered in Cloud Map without Kubernetes (as ECS would), imported by a CloudMapServiceImport:`,
    ...observations.map(
      (o) =>
        `  ${o.cluster}  ServiceImport ${namespace}/${EXTERNAL.service}  ready: ${o.ready.join(' ') || 'none'}  not ready (unhealthy): ${o.notReady.join(' ') || 'none'}  source-cluster ${o.sourceClusters.join(',') || 'none'}`,
    ),
    `  status: ${observations[0]?.condition ?? ''}`,
  ];
}
