/**
 * What one cluster imports of a service, as the interop suite checks it: the imported
 * EndpointSlices (label `multicluster.kubernetes.io/service-name`, set by the AWS controller on
 * its derived slices and by our import agent on ours) grouped by their
 * `multicluster.kubernetes.io/source-cluster`, who manages them, and whether the ServiceImport
 * exists. Waits poll until the view is the expected one, with the last view in the message.
 */
import {
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import type { ClusterIdentity } from '@cloudmap-mcs/core';
import { clusterIdProperty, clustersetProperty, statusOf } from '../resources.js';
import { waitFor, WaitTimeoutError } from '../wait.js';

export const sliceManager = {
  controller: 'aws-cloud-map-mcs-controller-for-k8s',
  ours: 'cloudmap-mcs-import-agent',
} as const;

/** Source cluster → addresses, sorted; clusters without an address are left out. */
export type ByCluster = Readonly<Record<string, readonly string[]>>;

export interface ImportView {
  readonly byCluster: ByCluster;
  /** The slices' `endpointslice.kubernetes.io/managed-by` values, sorted, distinct. */
  readonly managers: readonly string[];
  readonly serviceImport: boolean;
}

const serviceNameLabel = 'multicluster.kubernetes.io/service-name';
const sourceClusterLabel = 'multicluster.kubernetes.io/source-cluster';
const managedByLabel = 'endpointslice.kubernetes.io/managed-by';

const mcs = { group: 'multicluster.x-k8s.io', version: 'v1alpha1' } as const;

/** Clusters and their addresses in sorted order (views compare as JSON); empty ones dropped. */
const sorted = (want: ByCluster): ByCluster =>
  Object.fromEntries(
    Object.entries(want)
      .filter(([, addrs]) => addrs.length > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, addrs]) => [c, [...addrs].sort()]),
  );

function group(slices: readonly V1EndpointSlice[]): ImportView['byCluster'] {
  const out: Record<string, string[]> = {};
  for (const s of slices) {
    const cluster = s.metadata?.labels?.[sourceClusterLabel] ?? '(no source-cluster label)';
    for (const e of s.endpoints ?? []) (out[cluster] ??= []).push(...e.addresses);
  }
  return sorted(out);
}

export async function importView(
  kc: KubeConfig,
  namespace: string,
  service: string,
): Promise<ImportView> {
  const { items } = await kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace,
    labelSelector: `${serviceNameLabel}=${service}`,
  });
  const managers = [
    ...new Set(items.map((s) => s.metadata?.labels?.[managedByLabel] ?? '(none)')),
  ].sort();
  let serviceImport = true;
  try {
    await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...mcs, namespace, plural: 'serviceimports', name: service });
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
    serviceImport = false;
  }
  return { byCluster: group(items), managers, serviceImport };
}

/**
 * The view a cluster should show: `want`'s endpoints, in slices of `manager` only, under a
 * ServiceImport; `want` with no address means the import is gone (no slice, no ServiceImport).
 */
export function viewMatches(view: ImportView, want: ByCluster, manager: string): boolean {
  const expected = sorted(want);
  const empty = Object.keys(expected).length === 0;
  if (JSON.stringify(view.byCluster) !== JSON.stringify(expected)) return false;
  if (empty) return !view.serviceImport && view.managers.length === 0;
  return view.serviceImport && view.managers.length === 1 && view.managers[0] === manager;
}

export interface Follower {
  readonly name: string;
  readonly kc: KubeConfig;
  /** Which implementation imports in that cluster. */
  readonly manager: string;
}

/**
 * Polls (every 200 ms) until the cluster's view of the service is `want`; resolves with the
 * seconds since `sinceMs`. Fails after `timeoutMs` naming the service, the cluster, what was
 * expected and the last view.
 */
export async function untilImported(
  c: Follower,
  namespace: string,
  service: string,
  want: ByCluster,
  { sinceMs, timeoutMs = 30_000 }: { sinceMs: number; timeoutMs?: number },
): Promise<number> {
  let last: ImportView | undefined;
  try {
    await waitFor(
      `${service} in ${c.name}`,
      async () => viewMatches((last = await importView(c.kc, namespace, service)), want, c.manager),
      { timeoutMs, intervalMs: 200 },
    );
  } catch (err) {
    if (!(err instanceof WaitTimeoutError)) throw err;
    throw new Error(
      `${c.name} (${c.manager}) did not show ${service} as ${JSON.stringify(sorted(want))} ` +
        `within ${timeoutMs / 1000} s; last seen: ${JSON.stringify(last)}`,
      { cause: err },
    );
  }
  return (Date.now() - sinceMs) / 1000;
}

/** Deletes the ServiceExport (v1alpha1, read by both implementations). */
export async function deleteServiceExport(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...mcs, namespace, plural: 'serviceexports', name });
}

/** The cluster's ClusterProperties `cluster.clusterset.k8s.io` and `clusterset.k8s.io`. */
export async function clusterIdentityOf(kc: KubeConfig): Promise<ClusterIdentity> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const value = async (name: string): Promise<string> =>
    (
      (await api.getClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1beta1',
        plural: 'clusterproperties',
        name,
      })) as { spec: { value: string } }
    ).spec.value;
  return {
    clusterId: await value(clusterIdProperty),
    clustersetId: await value(clustersetProperty),
  };
}
