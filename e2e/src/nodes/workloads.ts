import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { waitFor } from '../wait.js';
import { nodeImageRefs } from './images.js';

/**
 * Workloads that run on real nodes (locally built images, never pulled): the echo backend
 * the demo and the tests export, and a client pod to resolve and call from.
 */

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
    body: {
      metadata: { name: o.name, labels },
      spec: {
        replicas: o.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
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
        },
      },
    },
  });
  await kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: o.namespace,
    body: {
      metadata: { name: o.name },
      spec: {
        selector: labels,
        ports: [{ name: 'http', protocol: 'TCP', port: o.port ?? 80, targetPort: 'http' }],
      },
    },
  });
}

export async function exportService(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'multicluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'serviceexports',
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
    group: 'multicluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'serviceexports',
    namespace,
    name,
  });
}

/** A long-running pod with sh, nslookup, wget and nc (the netshoot stand-in). */
export async function startClientPod(
  kc: KubeConfig,
  namespace: string,
  name = 'client',
): Promise<V1Pod> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'client',
            image: nodeImageRefs.netshoot,
            imagePullPolicy: 'Never',
            command: ['sleep', '100000'],
          },
        ],
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

/** Waits until `replicas` pods of the Deployment are Ready; returns their names and IPs. */
export async function waitDeploymentPods(
  kc: KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
  timeoutMs = 90_000,
): Promise<{ name: string; ip: string }[]> {
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
        ? ready.map((p) => ({ name: p.metadata?.name ?? '', ip: p.status?.podIP ?? '' }))
        : undefined;
    },
    { timeoutMs, intervalMs: 300 },
  );
}
