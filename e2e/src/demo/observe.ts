/** Reads what `verify.ts` evaluates, through client-node. */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { statusOf } from '../resources.js';
import type { ClusterObservation, ObservedImport } from './verify.js';

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
  const imported: Record<string, Set<string>> = {};
  for (const s of slices.items) {
    const source = s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'] ?? '?';
    const set = (imported[source] ??= new Set());
    for (const e of s.endpoints ?? [])
      if (e.conditions?.ready !== false) for (const a of e.addresses) set.add(a);
  }
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
    exportConditions: Object.fromEntries(
      (se?.status?.conditions ?? []).map((c) => [c.type ?? '', c.status ?? '']),
    ),
    serviceImport,
    importedEndpoints: Object.fromEntries(Object.entries(imported).map(([k, v]) => [k, v.size])),
    derivedServiceIp: derived?.spec?.clusterIP,
  };
}
