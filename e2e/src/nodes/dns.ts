import { join } from 'node:path';
import {
  AppsV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { applyFile } from '../demo/apply.js';
import { repoRoot } from '../paths.js';
import { waitFor } from '../wait.js';
import { nodeImageRefs } from './images.js';
import { labelledDeployment } from './workloads.js';

const fieldManager = 'cloudmap-mcs-harness';

async function apply(kc: KubeConfig, objects: readonly KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    await api.patch(obj, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
  }
}

/**
 * The `kubernetes` Service's endpoint: the API server runs on the host's 127.0.0.1 (no
 * endpoint reconciler), so pods reach it at the node's relay (node IP, same port).
 */
export async function publishApiserverEndpoint(
  kc: KubeConfig,
  nodeIp: string,
  port: number,
): Promise<void> {
  await apply(kc, [
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: {
          'kubernetes.io/service-name': 'kubernetes',
          'endpointslice.kubernetes.io/managed-by': 'e2e.cloudmap-mcs.io',
        },
      },
      addressType: nodeIp.includes(':') ? 'IPv6' : 'IPv4',
      endpoints: [{ addresses: [nodeIp], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    } as KubernetesObject,
  ]);
}

/**
 * CoreDNS as the cluster DNS: a Deployment in kube-system behind the `kube-dns` Service on
 * `dnsIp`, configured by samples/coredns (the Corefile with `multicluster clusterset.local`
 * and its RBAC), so the sample users apply is what the harness tests.
 */
export async function installCoreDns(kc: KubeConfig, dnsIp: string): Promise<void> {
  const labels = { 'k8s-app': 'kube-dns' };
  await apply(kc, [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'coredns', namespace: 'kube-system' },
    },
    {
      // What the stock system:coredns ClusterRole of kubeadm/EKS grants.
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        {
          apiGroups: [''],
          resources: ['endpoints', 'services', 'pods', 'namespaces'],
          verbs: ['list', 'watch'],
        },
        {
          apiGroups: ['discovery.k8s.io'],
          resources: ['endpointslices'],
          verbs: ['list', 'watch'],
        },
      ],
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:coredns',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
    } as KubernetesObject,
  ]);
  const samples = join(repoRoot(), 'samples', 'coredns');
  await applyFile(kc, join(samples, 'coredns-rbac.yaml'));
  await applyFile(kc, join(samples, 'corefile-configmap.yaml'));
  await apply(kc, [
    labelledDeployment({
      namespace: 'kube-system',
      name: 'coredns',
      labels,
      replicas: 1,
      pod: {
        serviceAccountName: 'coredns',
        dnsPolicy: 'Default',
        priorityClassName: 'system-cluster-critical',
        containers: [
          {
            name: 'coredns',
            image: nodeImageRefs.coredns,
            imagePullPolicy: 'Never',
            args: ['-conf', '/etc/coredns/Corefile'],
            ports: [
              { name: 'dns', containerPort: 53, protocol: 'UDP' },
              { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
              { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
            ],
            readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
            livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
            volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
          },
        ],
        volumes: [
          {
            name: 'config',
            configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] },
          },
        ],
      },
    }) as KubernetesObject,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels },
      spec: {
        clusterIP: dnsIp,
        selector: labels,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
        ],
      },
    } as KubernetesObject,
  ]);
}

export async function waitCoreDnsReady(kc: KubeConfig, timeoutMs = 120_000): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  await waitFor(
    'CoreDNS ready',
    async () => {
      const d = await apps.readNamespacedDeployment({ name: 'coredns', namespace: 'kube-system' });
      return (d.status?.readyReplicas ?? 0) >= 1;
    },
    { timeoutMs, intervalMs: 500 },
  );
}
