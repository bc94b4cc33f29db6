/**
 * What the benchmark exports: selector-less Services with hand-written EndpointSlices (so
 * N × M endpoints cost no Pods, and an endpoint change is one EndpointSlice write whose time
 * we know), each with a ServiceExport. Both our export agent and the AWS controller read
 * EndpointSlices by `kubernetes.io/service-name`, whoever manages them.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { statusOf } from '../resources.js';
import { mapLimit } from './concurrency.js';

export const benchNamespace = 'bench';
export const unrelatedNamespace = 'bench-unrelated';
const managedBy = 'bench.cloudmap-mcs.io';
const createConcurrency = 16;

export const serviceName = (i: number): string => `svc-${i}`;
const sliceName = (service: string): string => `${service}-bench`;

/** Hands out distinct IPv4 addresses of the exporting cluster's pod range 10.<index>.0.0/16. */
export class AddressPool {
  private next = 1;
  constructor(private readonly clusterIndex: number) {}
  take(): string {
    const k = this.next++;
    if (k > 65_534) throw new Error('address pool of 10.<cluster>.0.0/16 exhausted');
    return `10.${this.clusterIndex}.${k >> 8}.${k & 255}`;
  }
}

export async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
  }
}

function sliceBody(service: string, addresses: readonly string[]): V1EndpointSlice {
  return {
    metadata: {
      name: sliceName(service),
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': managedBy,
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

/** One exported service: Service, EndpointSlice, ServiceExport (v1alpha1, read by both sides). */
export async function createExportedService(
  kc: KubeConfig,
  namespace: string,
  service: string,
  addresses: readonly string[],
): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespacedService({
    namespace,
    body: {
      metadata: { name: service },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    },
  });
  await kc
    .makeApiClient(DiscoveryV1Api)
    .createNamespacedEndpointSlice({ namespace, body: sliceBody(service, addresses) });
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'multicluster.x-k8s.io',
    version: 'v1alpha1',
    namespace,
    plural: 'serviceexports',
    body: {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceExport',
      metadata: { name: service },
    },
  });
}

/** Creates `count` exported services of `endpoints` addresses each; returns their addresses. */
export async function createExportedServices(
  kc: KubeConfig,
  namespace: string,
  names: readonly string[],
  endpoints: number,
  pool: AddressPool,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const name of names)
    out.set(
      name,
      Array.from({ length: endpoints }, () => pool.take()),
    );
  await mapLimit(names, createConcurrency, (name) =>
    createExportedService(kc, namespace, name, out.get(name)!),
  );
  return out;
}

/**
 * Replaces one address of the service's EndpointSlice by a fresh one (an endpoint change as a
 * rollout makes it); resolves once the API server accepted the write, with the new set.
 */
export async function replaceOneAddress(
  kc: KubeConfig,
  namespace: string,
  service: string,
  current: readonly string[],
  pool: AddressPool,
): Promise<string[]> {
  const api = kc.makeApiClient(DiscoveryV1Api);
  const slice = await api.readNamespacedEndpointSlice({ name: sliceName(service), namespace });
  const next = [...current];
  next[Math.floor(Math.random() * next.length)] = pool.take();
  const body = sliceBody(service, next);
  body.metadata = { ...body.metadata, resourceVersion: slice.metadata?.resourceVersion ?? '' };
  await api.replaceNamespacedEndpointSlice({ name: sliceName(service), namespace, body });
  return next;
}

/** Sets the service's EndpointSlice to exactly `addresses` (scaling); resolves once accepted. */
export async function setAddresses(
  kc: KubeConfig,
  namespace: string,
  service: string,
  addresses: readonly string[],
): Promise<void> {
  const api = kc.makeApiClient(DiscoveryV1Api);
  const slice = await api.readNamespacedEndpointSlice({ name: sliceName(service), namespace });
  const body = sliceBody(service, addresses);
  body.metadata = { ...body.metadata, resourceVersion: slice.metadata?.resourceVersion ?? '' };
  await api.replaceNamespacedEndpointSlice({ name: sliceName(service), namespace, body });
}

/**
 * `count` Services and EndpointSlices (one address each) that nothing exports: the agents'
 * memory must not grow with them (issue 14).
 */
export async function createUnrelatedObjects(kc: KubeConfig, count: number): Promise<void> {
  await ensureNamespace(kc, unrelatedNamespace);
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const pool = new AddressPool(250);
  const names = Array.from({ length: count }, (_, i) => `unrelated-${i}`);
  await mapLimit(names, createConcurrency, async (name) => {
    await core.createNamespacedService({
      namespace: unrelatedNamespace,
      body: {
        metadata: { name },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: unrelatedNamespace,
      body: sliceBody(name, [pool.take()]),
    });
  });
}
