/**
 * Kubernetes side of the fault suite: exports made of a selector-less Service, one
 * hand-written EndpointSlice and a ServiceExport (cheaper and more predictable than pods on
 * a loaded machine), and readers of what the import agents built.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { statusOf } from '../resources.js';
import type { IpFamilyMode } from '../network.js';

export interface ChaosCluster {
  readonly name: string;
  readonly kubeconfigPath: string;
  readonly kc: KubeConfig;
  /** The cluster's IP families (`make chaos CHAOS_ARGS='--ip-family dual'`); default ipv4. */
  readonly ipFamily?: IpFamilyMode;
}

export const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
export const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };
const SLICE_MANAGER = 'chaos.e2e.cloudmap-mcs.io';

/** `n` pod addresses of cluster index `i` (10.i.x.y, inside its pod CIDR), from `first`. */
export const podIps = (clusterIndex: number, n: number, first = 0): string[] =>
  Array.from({ length: n }, (_, k) => {
    const j = first + k;
    return `10.${String(clusterIndex)}.${String(100 + Math.floor(j / 250))}.${String((j % 250) + 1)}`;
  });

const sliceName = (name: string, part: number): string => `${name}-chaos-${String(part)}`;

function sliceBody(
  ns: string,
  name: string,
  part: number,
  ips: readonly string[],
  ports: number,
): V1EndpointSlice {
  return {
    metadata: {
      name: sliceName(name, part),
      namespace: ns,
      labels: {
        'kubernetes.io/service-name': name,
        'endpointslice.kubernetes.io/managed-by': SLICE_MANAGER,
      },
    },
    addressType: 'IPv4',
    // An EndpointSlice holds at most 100 ports (the API server's limit); the Service may have more.
    ports: Array.from({ length: Math.min(ports, 100) }, (_, k) => ({
      name: k === 0 ? 'http' : `p${String(k)}`,
      protocol: 'TCP',
      port: 8080 + k,
    })),
    endpoints: ips.map((ip) => ({
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      zone: 'us-east-1a',
    })),
  };
}

/** A Service with `ports` ports, its endpoints in slices of ≤ 1,000, and (unless told not to) a ServiceExport. */
export async function exportService(
  c: ChaosCluster,
  ns: string,
  name: string,
  ips: readonly string[],
  { ports = 1, serviceExport = true }: { ports?: number; serviceExport?: boolean } = {},
): Promise<void> {
  await c.kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns },
      spec: {
        ports: Array.from({ length: ports }, (_, k) => ({
          name: k === 0 ? 'http' : `p${String(k)}`,
          protocol: 'TCP',
          port: 80 + k,
          targetPort: 8080 + k,
        })),
      },
    },
  });
  const discovery = c.kc.makeApiClient(DiscoveryV1Api);
  for (let part = 0; part * 1000 < Math.max(ips.length, 1); part++) {
    await discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: sliceBody(ns, name, part, ips.slice(part * 1000, (part + 1) * 1000), ports),
    });
  }
  if (serviceExport) await createServiceExport(c, ns, name);
}

export async function createServiceExport(
  c: ChaosCluster,
  ns: string,
  name: string,
): Promise<void> {
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

export async function deleteServiceExport(
  c: ChaosCluster,
  ns: string,
  name: string,
): Promise<void> {
  await c.kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...SE, namespace: ns, name });
}

/** Replaces the endpoints of a service made by exportService (≤ 1,000, one port). */
export async function setEndpoints(
  c: ChaosCluster,
  ns: string,
  name: string,
  ips: readonly string[],
): Promise<void> {
  await c.kc.makeApiClient(DiscoveryV1Api).replaceNamespacedEndpointSlice({
    namespace: ns,
    name: sliceName(name, 0),
    body: sliceBody(ns, name, 0, ips, 1),
  });
}

export interface ImportView {
  /** ServiceImport names present. */
  readonly imports: Set<string>;
  /** `<service>` → `<source cluster>` → sorted addresses, from the imported EndpointSlices. */
  readonly endpoints: Map<string, Map<string, string[]>>;
}

/** Everything the import agent built in one namespace of one cluster (two list calls). */
export async function importView(c: ChaosCluster, ns: string): Promise<ImportView> {
  const list = (await c.kc
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...SI, namespace: ns })) as {
    items: { metadata: { name: string } }[];
  };
  const slices = await c.kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace: ns,
    labelSelector: 'endpointslice.kubernetes.io/managed-by=cloudmap-mcs-import-agent',
  });
  const endpoints = new Map<string, Map<string, string[]>>();
  for (const s of slices.items) {
    const labels = s.metadata?.labels ?? {};
    const svc = labels['multicluster.kubernetes.io/service-name'] ?? '?';
    const src = labels['multicluster.kubernetes.io/source-cluster'] ?? '?';
    const bySource = endpoints.get(svc) ?? new Map<string, string[]>();
    endpoints.set(svc, bySource);
    bySource.set(
      src,
      [...(bySource.get(src) ?? []), ...(s.endpoints ?? []).flatMap((e) => e.addresses)].sort(),
    );
  }
  return { imports: new Set(list.items.map((i) => i.metadata.name)), endpoints };
}

/** Imported addresses of one service from one source cluster. */
export const importedFrom = (view: ImportView, service: string, source: string): string[] =>
  view.endpoints.get(service)?.get(source) ?? [];

export interface ServiceImportObject {
  metadata: { name: string; resourceVersion: string };
  spec?: { ips?: string[]; type?: string };
  status?: {
    clusters?: { cluster: string }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export async function serviceImport(
  c: ChaosCluster,
  ns: string,
  name: string,
): Promise<ServiceImportObject | undefined> {
  try {
    return (await c.kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SI, namespace: ns, name })) as ServiceImportObject;
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

export interface ServiceExportObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

export async function serviceExportConditions(
  c: ChaosCluster,
  ns: string,
  name: string,
): Promise<Record<string, string>> {
  try {
    const se = (await c.kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SE, namespace: ns, name })) as ServiceExportObject;
    return Object.fromEntries(
      (se.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason ?? ''}`]),
    );
  } catch (err) {
    if (statusOf(err) === 404) return {};
    throw err;
  }
}

/** Events in a namespace about one object, as `reason: message`. */
export async function eventsAbout(c: ChaosCluster, ns: string, name: string): Promise<string[]> {
  const list = await c.kc.makeApiClient(CoreV1Api).listNamespacedEvent({
    namespace: ns,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => `${e.type ?? ''} ${e.reason ?? ''}: ${e.message ?? ''}`);
}
