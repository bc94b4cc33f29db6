/** MCS objects written directly, as an agent pair would write them (integration tests). */
import { writeFileSync } from 'node:fs';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ClusterExport } from '@cloudmap-mcs/core';

const mcs = { group: 'multicluster.x-k8s.io', version: 'v1beta1' };

const condition = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: 'ok',
  lastTransitionTime: new Date().toISOString(),
});

export const healthyExportConditions = () => [
  condition('Valid', 'True', 'Valid'),
  condition('Ready', 'True', 'Exported'),
  condition('Conflict', 'False', 'NoConflicts'),
];

/** Creates the object, then writes its status (the status subresource ignores it on create). */
async function createWithStatus(
  kc: KubeConfig,
  namespace: string,
  plural: 'serviceexports' | 'serviceimports',
  body: Record<string, unknown>,
  status: Record<string, unknown>,
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({ ...mcs, namespace, plural, body });
  const name = (body['metadata'] as { name: string }).name;
  const current = (await custom.getNamespacedCustomObject({
    ...mcs,
    namespace,
    plural,
    name,
  })) as Record<string, unknown>;
  await custom.replaceNamespacedCustomObjectStatus({
    ...mcs,
    namespace,
    plural,
    name,
    body: { ...current, status },
  });
}

export const createServiceExport = (kc: KubeConfig, namespace: string, name: string) =>
  createWithStatus(
    kc,
    namespace,
    'serviceexports',
    { apiVersion: `${mcs.group}/${mcs.version}`, kind: 'ServiceExport', metadata: { name } },
    { conditions: healthyExportConditions() },
  );

export const createServiceImport = (
  kc: KubeConfig,
  namespace: string,
  name: string,
  ip: string,
  clusters: string[],
) =>
  createWithStatus(
    kc,
    namespace,
    'serviceimports',
    {
      apiVersion: `${mcs.group}/${mcs.version}`,
      kind: 'ServiceImport',
      metadata: { name },
      spec: {
        type: 'ClusterSetIP',
        ips: [ip],
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      },
    },
    { clusters: clusters.map((cluster) => ({ cluster })) },
  );

export function exportOf(
  namespace: string,
  cluster: string,
  clustersetId: string,
  addresses: string[],
  createdAtMs: number,
): ClusterExport {
  return {
    namespace,
    name: 'hello',
    cluster: { clusterId: cluster, clustersetId },
    properties: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: createdAtMs,
    },
    endpoints: addresses.map((address) => ({
      address,
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      conditions: { ready: true, serving: true, terminating: false },
    })),
    hasExportRecord: true,
  };
}

export function importedSlice(cluster: string, addresses: string[]) {
  return {
    metadata: {
      name: `hello-${cluster}`,
      labels: {
        'multicluster.kubernetes.io/service-name': 'hello',
        'multicluster.kubernetes.io/source-cluster': cluster,
        'endpointslice.kubernetes.io/managed-by': 'cli-status-int-test',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

/** One kubeconfig file holding a context per cluster (named after it), for --all-contexts. */
export function writeMergedKubeconfig(
  path: string,
  clusters: readonly { name: string; kc: KubeConfig }[],
): void {
  type Named = { name: string } & Record<string, unknown>;
  const merged = { clusters: [] as Named[], users: [] as Named[], contexts: [] as Named[] };
  for (const c of clusters) {
    const cfg = JSON.parse(c.kc.exportConfig()) as {
      clusters: Named[];
      users: Named[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      'current-context': string;
    };
    const ctx = cfg.contexts.find((x) => x.name === cfg['current-context']) ?? cfg.contexts[0];
    const cluster = cfg.clusters.find((x) => x.name === ctx?.context.cluster);
    const user = cfg.users.find((x) => x.name === ctx?.context.user);
    if (cluster === undefined || user === undefined) throw new Error(`kubeconfig of ${c.name}?`);
    merged.clusters.push({ ...cluster, name: c.name });
    merged.users.push({ ...user, name: `${c.name}-user` });
    merged.contexts.push({ name: c.name, context: { cluster: c.name, user: `${c.name}-user` } });
  }
  const first = clusters[0]?.name ?? '';
  writeFileSync(
    path,
    JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...merged, 'current-context': first }),
    { mode: 0o600 },
  );
}
