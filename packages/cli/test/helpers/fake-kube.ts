/** In-memory KubeReader and GatherReader for the command tests. */
import type {
  DeploymentInfo,
  LeaseInfo,
  PodInfo,
  ServiceAccountInfo,
  ServiceExportInfo,
  ServiceImportInfo,
  ImportedSliceInfo,
} from '../../src/kube/objects.js';
import type { GatherReader, McsList } from '../../src/kube/gather-reader.js';
import type { KubeReader } from '../../src/kube/reader.js';

export interface FakeCluster {
  context?: string;
  properties?: { name: string; value: string }[];
  namespaces?: string[];
  exports?: ServiceExportInfo[];
  imports?: ServiceImportInfo[];
  slices?: ImportedSliceInfo[];
  deployments?: DeploymentInfo[];
  pods?: PodInfo[];
  leases?: LeaseInfo[];
  serviceAccounts?: ServiceAccountInfo[];
}

export function fakeKube(c: FakeCluster): KubeReader {
  const matches = (p: PodInfo, ns: string, sel: Record<string, string>) =>
    p.namespace === ns && Object.entries(sel).every(([k, v]) => p.labels[k] === v);
  return {
    context: c.context ?? 'c1',
    server: 'https://fake',
    listServiceExports: async () => c.exports ?? [],
    listServiceImports: async () => c.imports ?? [],
    listImportedSlices: async () => c.slices ?? [],
    listNamespaces: async () => c.namespaces ?? ['demo'],
    getCrd: async () => undefined,
    listClusterProperties: async () => c.properties ?? [],
    getConfigMapData: async () => undefined,
    listDeployments: async () => c.deployments ?? [],
    listPods: async (ns, sel) => (c.pods ?? []).filter((p) => matches(p, ns, sel)),
    getLease: async (ns, name) =>
      (c.leases ?? []).find((l) => l.namespace === ns && l.name === name),
    getServiceAccount: async (ns, name) =>
      (c.serviceAccounts ?? []).find((s) => s.namespace === ns && s.name === name),
  };
}

export const agentDeployment = (
  kind: 'export' | 'import',
  env: Record<string, string> = {},
): DeploymentInfo => ({
  namespace: 'cloudmap-mcs-system',
  name: `cloudmap-mcs-${kind}-agent`,
  labels: { 'app.kubernetes.io/component': `${kind}-agent` },
  images: [],
  replicas: 2,
  readyReplicas: 2,
  availableReplicas: 2,
  serviceAccountName: `cloudmap-mcs-${kind}-agent`,
  env,
  selector: { 'app.kubernetes.io/component': `${kind}-agent` },
});

export const agentPod = (
  kind: 'export' | 'import',
  name: string,
  ready = true,
  envNames: string[] = [],
): PodInfo => ({
  namespace: 'cloudmap-mcs-system',
  name,
  labels: { 'app.kubernetes.io/component': `${kind}-agent` },
  ready,
  phase: 'Running',
  envNames,
  containers: [`${kind}-agent`],
  metricsPort: 8081,
});

export const agentLease = (
  kind: 'export' | 'import',
  holder: string,
  renewedMs: number,
): LeaseInfo => ({
  namespace: 'cloudmap-mcs-system',
  name: `cloudmap-mcs-${kind}-agent`,
  holderIdentity: holder,
  renewTime: new Date(renewedMs).toISOString(),
  leaseDurationSeconds: 15,
});

/** A GatherReader over raw objects; records every call. */
export function fakeGatherReader(
  objects: Partial<Record<McsList | 'services', Record<string, unknown>[]>>,
) {
  const calls: string[] = [];
  const reader: GatherReader = {
    list: async (what, namespace) => {
      calls.push(`list ${what} ${namespace ?? '*'}`);
      const meta = (o: Record<string, unknown>) => (o['metadata'] ?? {}) as { namespace?: string };
      return (objects[what] ?? []).filter(
        (o) => namespace === undefined || meta(o).namespace === namespace,
      );
    },
    getService: async (namespace, name) =>
      (objects.services ?? []).find((s) => {
        const m = (s['metadata'] ?? {}) as { namespace?: string; name?: string };
        return m.namespace === namespace && m.name === name;
      }),
    podLog: async (ns, pod, container, tail) => {
      calls.push(`log ${ns}/${pod}/${container} ${tail}`);
      return `log of ${pod}\n`;
    },
    podMetrics: async (ns, pod, port) => {
      calls.push(`metrics ${ns}/${pod}:${port}`);
      return `leader_election_master_status{name="${pod}"} 1\n`;
    },
  };
  return { reader, calls };
}
