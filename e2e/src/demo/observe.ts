/** Reads what `verify.ts` evaluates, through client-node. */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { statusOf } from '../resources.js';
import type { ClusterObservation, IpFamily, ObservedImport } from './verify.js';

const MCS = { group: 'multicluster.x-k8s.io', version: 'v1beta1' };

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

interface Conditioned {
  status?: { conditions?: { type?: string; status?: string }[] };
}
interface ImportObject {
  spec?: { type?: string; ips?: string[] };
  status?: { clusters?: { cluster?: string }[] };
  metadata?: { annotations?: Record<string, string> };
}

export async function observeCluster(
  cluster: string,
  kc: KubeConfig,
  namespace: string,
  service: string,
): Promise<ClusterObservation> {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const discovery = kc.makeApiClient(DiscoveryV1Api);

  const deployment = await orUndefined(() =>
    apps.readNamespacedDeployment({ namespace, name: service }),
  );
  const se = (await orUndefined(() =>
    custom.getNamespacedCustomObject({
      ...MCS,
      namespace,
      plural: 'serviceexports',
      name: service,
    }),
  )) as Conditioned | undefined;
  const si = (await orUndefined(() =>
    custom.getNamespacedCustomObject({
      ...MCS,
      namespace,
      plural: 'serviceimports',
      name: service,
    }),
  )) as ImportObject | undefined;
  const slices = await discovery.listNamespacedEndpointSlice({
    namespace,
    labelSelector: `multicluster.kubernetes.io/service-name=${service}`,
  });
  const imported: Record<string, Partial<Record<IpFamily, Set<string>>>> = {};
  for (const s of slices.items) {
    if (s.addressType !== 'IPv4' && s.addressType !== 'IPv6') continue;
    const source = s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] ?? '?';
    const set = ((imported[source] ??= {})[s.addressType] ??= new Set());
    for (const e of s.endpoints ?? [])
      if (e.conditions?.ready !== false) for (const a of e.addresses) set.add(a);
  }
  // The exported Service's families: what each importer must hold from this cluster.
  const exported = await orUndefined(() =>
    core.readNamespacedService({ namespace, name: service }),
  );
  const exportedFamilies = (exported?.spec?.ipFamilies ?? ['IPv4']).filter(
    (f): f is IpFamily => f === 'IPv4' || f === 'IPv6',
  );
  const serviceImport: ObservedImport | undefined =
    si === undefined
      ? undefined
      : {
          type: si.spec?.type ?? '',
          ips: si.spec?.ips ?? [],
          clusters: (si.status?.clusters ?? []).map((c) => c.cluster ?? '').filter((c) => c !== ''),
        };
  // The derived Service the import agent made for this ServiceImport (its ClusterIP is the
  // clusterset IP), named by the ServiceImport's annotation.
  const derivedName = si?.metadata?.annotations?.['multicluster.kubernetes.io/derived-service'];
  const derived =
    derivedName === undefined
      ? undefined
      : await orUndefined(() => core.readNamespacedService({ namespace, name: derivedName }));
  return {
    cluster,
    exportedEndpoints: deployment?.status?.readyReplicas ?? 0,
    exportedFamilies,
    exportConditions: Object.fromEntries(
      (se?.status?.conditions ?? []).map((c) => [c.type ?? '', c.status ?? '']),
    ),
    serviceImport,
    importedEndpoints: Object.fromEntries(
      Object.entries(imported).map(([source, byFamily]) => [
        source,
        Object.fromEntries(Object.entries(byFamily).map(([f, set]) => [f, set.size])),
      ]),
    ),
    derivedServiceIp: derived?.spec?.clusterIP,
  };
}
