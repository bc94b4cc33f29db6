/** Reads everything `status` shows, tolerating whatever is missing. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import type { ClustersetRecords } from '../cloudmap/records.js';
import { readClustersetRecords } from '../cloudmap/records.js';
import { identityFromProperties } from '../identity.js';
import { readClusterProperties } from '../kube/cluster-properties.js';
import type { KubeReader } from '../kube/reader.js';
import type { StatusFacts } from './build.js';

export interface CollectStatusDeps {
  kube: KubeReader;
  /** Absent when no Cloud Map endpoint/region is configured. */
  cloudMap?: { port: CloudMapPort } | undefined;
  /** Only this namespace (`--namespace`); every namespace when absent. */
  namespace?: string | undefined;
  now: () => number;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function collectStatus(deps: CollectStatusDeps): Promise<StatusFacts> {
  const { kube } = deps;
  const errors: string[] = [];
  async function attempt<T>(fallback: T, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (e) {
      errors.push(message(e));
      return fallback;
    }
  }

  const [properties, allNamespaces, allExports, allImports, allSlices] = await Promise.all([
    attempt(undefined, () => readClusterProperties(kube)),
    attempt([] as string[], () => kube.listNamespaces()),
    attempt([], () => kube.listServiceExports()),
    attempt([], () => kube.listServiceImports()),
    attempt([], () => kube.listImportedSlices()),
  ]);
  const only = deps.namespace;
  const inScope = <T extends { namespace: string }>(list: T[]) =>
    only === undefined ? list : list.filter((o) => o.namespace === only);
  const namespaces = only === undefined ? allNamespaces : allNamespaces.filter((n) => n === only);
  const [exports, imports, slices] = [inScope(allExports), inScope(allImports), inScope(allSlices)];
  const { identity, problems } = identityFromProperties(properties ?? []);
  if (properties === undefined) errors.push('the ClusterProperty CRD is not served');
  for (const p of problems)
    if (p.severity === 'fail') errors.push(`ClusterProperty ${p.property}: ${p.problem}`);

  let cloudMap: ClustersetRecords | { error: string };
  if (deps.cloudMap === undefined)
    cloudMap = {
      error: 'no Cloud Map endpoint configured (set AWS_REGION, or --cloudmap-endpoint)',
    };
  else if (identity === undefined)
    cloudMap = {
      error: 'the clusterset is unknown without a valid clusterset.k8s.io ClusterProperty',
    };
  else {
    try {
      cloudMap = await readClustersetRecords(deps.cloudMap.port, {
        clustersetId: identity.clustersetId,
        namespaces,
      });
    } catch (e) {
      cloudMap = { error: `reading Cloud Map failed: ${message(e)}` };
    }
  }
  return {
    context: kube.context,
    server: kube.server,
    identity,
    namespaces,
    exports,
    imports,
    slices,
    cloudMap,
    nowMs: deps.now(),
    errors,
  };
}
