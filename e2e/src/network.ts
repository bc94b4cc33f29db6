/** Address plan of the local clusters (documented in docs/harness.md). */
export interface ClusterNetwork {
  /** Pods of this cluster; node k gets the k-th /20 of it as spec.podCIDR. */
  readonly podCidr: string;
  readonly serviceCidr: string;
  /** InternalIP of node k is nodeIps[k]. */
  readonly nodeIps: readonly string[];
  readonly nodePodCidrs: readonly string[];
}

export const maxClusters = 99;
export const maxNodesPerCluster = 16;

/**
 * Cluster i (1-based) gets pods 10.i.0.0/16 and services 10.(100+i).0.0/16. With
 * `overlapPodCidrs` every cluster uses 10.1.0.0/16 for pods, as independent real clusters do.
 * Node IPs are 172.16.i.(k+1): never loopback, never inside a pod or service range.
 */
export function clusterNetwork(
  index: number,
  nodes: number,
  overlapPodCidrs: boolean,
): ClusterNetwork {
  if (!Number.isInteger(index) || index < 1 || index > maxClusters) {
    throw new RangeError(`cluster index must be 1..${maxClusters}, got ${index}`);
  }
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > maxNodesPerCluster) {
    throw new RangeError(`nodes per cluster must be 1..${maxNodesPerCluster}, got ${nodes}`);
  }
  const podOctet = overlapPodCidrs ? 1 : index;
  const ks = Array.from({ length: nodes }, (_, k) => k);
  return {
    podCidr: `10.${podOctet}.0.0/16`,
    serviceCidr: `10.${100 + index}.0.0/16`,
    nodeIps: ks.map((k) => `172.16.${index}.${k + 1}`),
    nodePodCidrs: ks.map((k) => `10.${podOctet}.${k * 16}.0/20`),
  };
}
