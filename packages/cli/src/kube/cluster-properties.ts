import { CLUSTER_PROPERTY_VERSIONS } from '@cloudmap-mcs/core';
import type { ClusterPropertyInfo } from './objects.js';
import type { KubeReader } from './reader.js';
import { KubeReadError } from './reader.js';

/**
 * ClusterProperties through the first served about.k8s.io version; undefined when the
 * ClusterProperty CRD is not served at all.
 */
export async function readClusterProperties(
  kube: KubeReader,
): Promise<ClusterPropertyInfo[] | undefined> {
  for (const version of CLUSTER_PROPERTY_VERSIONS) {
    try {
      return await kube.listClusterProperties(version);
    } catch (e) {
      if (e instanceof KubeReadError && e.status === 404) continue;
      throw e;
    }
  }
  return undefined;
}
