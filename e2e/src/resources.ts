import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { crdDir } from './paths.js';
import { waitFor } from './wait.js';
import { kubeconfigYaml } from './kubeconfig.js';

/** HTTP status of a client-node ApiException, if that is what `err` is. */
export function statusOf(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number') {
    return err.code;
  }
  return undefined;
}

/** A create's `.catch`: 409 (the object already exists) is success, anything else throws. */
export function ignoreAlreadyExists(err: unknown): void {
  if (statusOf(err) !== 409) throw err;
}

/**
 * Creates or replaces the CRDs in deploy/crds and waits until they are Established and every
 * served version answers a list (waitForCrdApis).
 */
export async function installCrds(kc: KubeConfig, dir = crdDir()): Promise<string[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crds: V1CustomResourceDefinition[] = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap(
      (f) => loadAllYaml(readFileSync(join(dir, f), 'utf8')) as V1CustomResourceDefinition[],
    );
  for (const body of crds) {
    const name = body.metadata?.name ?? '';
    try {
      await api.createCustomResourceDefinition({ body });
    } catch (err) {
      if (statusOf(err) !== 409) throw new Error(`cannot create CRD ${name}`, { cause: err });
      const current = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({
        name,
        body: {
          ...body,
          metadata: {
            ...body.metadata,
            name,
            resourceVersion: current.metadata?.resourceVersion ?? '',
          },
        },
      });
    }
  }
  const names = crds.map((c) => c.metadata?.name ?? '');
  for (const name of names) {
    await waitFor(`CRD ${name} Established`, async () => {
      const crd = await api.readCustomResourceDefinition({ name });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
  await waitForCrdApis(kc, crds);
  return names;
}

/** group/version/plural of every served version of the CRDs. */
export function servedResources(
  crds: readonly V1CustomResourceDefinition[],
): { group: string; version: string; plural: string }[] {
  return crds.flatMap((crd) =>
    crd.spec.versions
      .filter((v) => v.served)
      .map((v) => ({ group: crd.spec.group, version: v.name, plural: crd.spec.names.plural })),
  );
}

/**
 * Established is not "answers": the API server builds a CRD's storage and watch cache on the
 * first request for it, and until that cache has loaded, requests it serves (a list at
 * resourceVersion 0, as informers start with, and watches) fail with
 * `429 storage is (re)initializing`. A caller that starts right after `up` (an agent's
 * informer, a conformance suite) would see that, so ready means a cache-served list of every
 * served version succeeds.
 */
export async function waitForCrdApis(
  kc: KubeConfig,
  crds: readonly V1CustomResourceDefinition[],
  timeoutMs = 60_000,
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  for (const r of servedResources(crds)) {
    await waitFor(
      `a list of ${r.plural}.${r.group}/${r.version} to succeed`,
      async () => {
        await api.listClusterCustomObject({ ...r, resourceVersion: '0' });
        return true;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }
}

export const clusterIdProperty = 'cluster.clusterset.k8s.io';
export const clustersetProperty = 'clusterset.k8s.io';

/** Creates (or updates) a cluster-scoped about.k8s.io ClusterProperty. */
export async function setClusterProperty(
  kc: KubeConfig,
  name: string,
  value: string,
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const target = { group: 'about.k8s.io', version: 'v1beta1', plural: 'clusterproperties' };
  const body = {
    apiVersion: 'about.k8s.io/v1beta1',
    kind: 'ClusterProperty',
    metadata: { name },
    spec: { value },
  };
  try {
    await api.createClusterCustomObject({ ...target, body });
  } catch (err) {
    if (statusOf(err) !== 409)
      throw new Error(`cannot create ClusterProperty ${name}`, { cause: err });
    const current = (await api.getClusterCustomObject({ ...target, name })) as {
      metadata: { resourceVersion: string };
    };
    await api.replaceClusterCustomObject({
      ...target,
      name,
      body: { ...body, metadata: { name, resourceVersion: current.metadata.resourceVersion } },
    });
  }
}

export interface TokenOptions {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Defaults to 3600; the API server may clamp it. */
  readonly expirationSeconds?: number;
  /** Defaults to the API server's own audience. */
  readonly audiences?: readonly string[];
}

/** Mints a bound token for a ServiceAccount through the TokenRequest API. */
export async function mintServiceAccountToken(kc: KubeConfig, opts: TokenOptions): Promise<string> {
  const api = kc.makeApiClient(CoreV1Api);
  const res = await api.createNamespacedServiceAccountToken({
    name: opts.serviceAccount,
    namespace: opts.namespace,
    body: {
      spec: {
        expirationSeconds: opts.expirationSeconds ?? 3600,
        audiences: opts.audiences !== undefined ? [...opts.audiences] : [],
      },
    },
  });
  const token = res.status?.token;
  if (token === undefined || token === '')
    throw new Error(`no token for ${opts.namespace}/${opts.serviceAccount}`);
  return token;
}

/**
 * A kubeconfig (YAML) that talks to the same API server as `kc` but authenticates as the
 * ServiceAccount, so a process runs with exactly that account's RBAC.
 */
export async function serviceAccountKubeconfig(
  kc: KubeConfig,
  opts: TokenOptions,
): Promise<string> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  const caPem =
    cluster.caData !== undefined
      ? Buffer.from(cluster.caData, 'base64').toString()
      : cluster.caFile !== undefined
        ? readFileSync(cluster.caFile, 'utf8')
        : '';
  const token = await mintServiceAccountToken(kc, opts);
  return kubeconfigYaml({
    name: cluster.name,
    server: cluster.server,
    caPem,
    user: `system:serviceaccount:${opts.namespace}:${opts.serviceAccount}`,
    token,
    namespace: opts.namespace,
  });
}
