import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Deployment,
  type V1Pod,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { waitFor } from '../wait.js';
import { nodeImageRefs } from './images.js';

/**
 * Workloads that run on real nodes (locally built images, never pulled): the echo backend
 * the demo and the tests export, and a client pod to resolve and call from.
 */

/**
 * A Deployment whose selector and pod template carry `labels` (the shape of every Deployment
 * the harness makes: the echo backend, CoreDNS, the AWS controller's stand-in).
 */
export function labelledDeployment(o: {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  replicas: number;
  pod: V1PodSpec;
}): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: o.labels },
      template: { metadata: { labels: o.labels }, spec: o.pod },
    },
  };
}

/** An echo Deployment answering `pod=<name> ip=<ip> cluster=<cluster>` on :8080, + Service. */
export async function deployEcho(
  kc: KubeConfig,
  o: { namespace: string; name: string; replicas: number; cluster: string; port?: number },
): Promise<void> {
  const labels = { app: o.name };
  const fieldEnv = (name: string, fieldPath: string) => ({
    name,
    valueFrom: { fieldRef: { fieldPath } },
  });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: o.namespace,
    body: labelledDeployment({
      namespace: o.namespace,
      name: o.name,
      labels,
      replicas: o.replicas,
      pod: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'echo',
            image: nodeImageRefs.echo,
            imagePullPolicy: 'Never',
            env: [
              fieldEnv('POD_NAME', 'metadata.name'),
              fieldEnv('POD_IP', 'status.podIP'),
              { name: 'CLUSTER', value: o.cluster },
            ],
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    }),
  });
  await kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: o.namespace,
    body: {
      metadata: { name: o.name },
      spec: {
        // Both families on a dual-stack cluster, the one family elsewhere.
        ipFamilyPolicy: 'PreferDualStack',
        selector: labels,
        ports: [{ name: 'http', protocol: 'TCP', port: o.port ?? 80, targetPort: 'http' }],
      },
    },
  });
}

const serviceExports = {
  group: 'multicluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'serviceexports',
};

export async function exportService(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...serviceExports,
    namespace,
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name },
    },
  });
}

export async function unexportService(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
    ...serviceExports,
    namespace,
    name,
  });
}

/** A long-running pod with sh, nslookup, wget and nc (the netshoot stand-in). */
export function startClientPod(kc: KubeConfig, namespace: string, name = 'client'): Promise<V1Pod> {
  return startSleepPod(kc, namespace, name, nodeImageRefs.netshoot, '100000');
}

/** A pod whose one container, of `image`, runs `sleep <arg>`; resolves once it is Ready. */
export async function startSleepPod(
  kc: KubeConfig,
  namespace: string,
  name: string,
  image: string,
  arg: string,
): Promise<V1Pod> {
  await kc.makeApiClient(CoreV1Api).createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'client', image, imagePullPolicy: 'Never', command: ['sleep', arg] }],
      },
    },
  });
  return waitPodReady(kc, namespace, name);
}

export async function waitPodReady(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs = 90_000,
): Promise<V1Pod> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    `pod ${namespace}/${name} Ready`,
    async () => {
      const pod = await core.readNamespacedPod({ namespace, name });
      const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      return ready ? pod : undefined;
    },
    { timeoutMs, intervalMs: 300 },
  );
}

/** Sets the Deployment's replica count (the scale subresource, as `kubectl scale` does). */
export async function scaleDeployment(
  kc: KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
): Promise<void> {
  await kc.makeApiClient(AppsV1Api).patchNamespacedDeploymentScale({
    namespace,
    name,
    body: [{ op: 'replace', path: '/spec/replicas', value: replicas }],
  });
}

/**
 * Waits until `replicas` pods of the Deployment are Ready; returns their names, primary IPs
 * and every IP (one per family on a dual-stack node).
 */
export async function waitDeploymentPods(
  kc: KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
  timeoutMs = 90_000,
): Promise<{ name: string; ip: string; ips: string[] }[]> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    `${replicas} ready pods of ${namespace}/${name}`,
    async () => {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${name}` });
      const ready = pods.items.filter(
        (p) =>
          p.metadata?.deletionTimestamp === undefined &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length === replicas
        ? ready.map((p) => ({
            name: p.metadata?.name ?? '',
            ip: p.status?.podIP ?? '',
            ips: (p.status?.podIPs ?? []).map((x) => x.ip),
          }))
        : undefined;
    },
    { timeoutMs, intervalMs: 300 },
  );
}
