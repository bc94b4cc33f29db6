import { BlockList, isIP } from 'node:net';
import { parseCidr } from '@cloudmap-mcs/core';

/** Address plan of the local clusters (documented in docs/harness.md). */
export interface ClusterNetwork {
  /**
   * Pods of this cluster; node k gets the k-th /20 (IPv6: /64) of it as spec.podCIDR. Dual
   * stack: `<IPv4 range>,<IPv6 range>`, the way Kubernetes flags take two families.
   */
  readonly podCidr: string;
  /** `--service-cluster-ip-range`: one range, or `<IPv4>,<IPv6>` for dual stack. */
  readonly serviceCidr: string;
  /** InternalIP of node k is nodeIps[k]. */
  readonly nodeIps: readonly string[];
  /** spec.podCIDRs of node k, comma-joined (two families for dual stack). */
  readonly nodePodCidrs: readonly string[];
  /** Present when not the default IPv4 single stack (so IPv4 state files stay as they were). */
  readonly ipFamily?: 'ipv6' | 'dual';
}

/** The clusters' IP families: IPv4 single stack (default), IPv6 single stack, or dual stack. */
export type IpFamilyMode = 'ipv4' | 'ipv6' | 'dual';
export const ipFamilyModes: readonly IpFamilyMode[] = ['ipv4', 'ipv6', 'dual'];

export function parseIpFamilyMode(value: string | undefined): IpFamilyMode {
  if (value === undefined || value === '') return 'ipv4';
  if ((ipFamilyModes as readonly string[]).includes(value)) return value as IpFamilyMode;
  throw new Error(`IP family must be one of ${ipFamilyModes.join(', ')}, got ${value}`);
}

/** An address as the host part of a URL or `host:port` (IPv6 in brackets, RFC 3986). */
export const urlHost = (ip: string): string => (ip.includes(':') ? `[${ip}]` : ip);

/** Whether `ip` lies in `cidr` (either family; the CIDR parsed as the agents parse it). */
export function inCidr(ip: string, cidr: string): boolean {
  const { network, prefix, family } = parseCidr(cidr);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return isIP(ip) !== 0 && list.check(ip, type);
}

export const maxClusters = 99;
export const maxNodesPerCluster = 16;

/**
 * Cluster i (1-based) gets pods 10.i.0.0/16 and services 10.(100+i).0.0/16. With
 * `overlapPodCidrs` every cluster uses 10.1.0.0/16 for pods, as independent real clusters do.
 * Node IPs are 172.16.i.(k+1): never loopback, never inside a pod or service range.
 *
 * IPv6 (`ipv6`, and the second family of `dual`): pods fd00:10:i::/56 (node k:
 * fd00:10:i:k::/64), services fd00:10:(100+i)::/108 — the API server's allocator takes at
 * most 20 bits of host part, so /108 or longer. IPv6-only nodes are fd00:172:16:i::(k+1);
 * dual-stack nodes keep their IPv4 address (kwok gives a node one InternalIP).
 */
export function clusterNetwork(
  index: number,
  nodes: number,
  overlapPodCidrs: boolean,
  ipFamily: IpFamilyMode = 'ipv4',
): ClusterNetwork {
  if (!Number.isInteger(index) || index < 1 || index > maxClusters) {
    throw new RangeError(`cluster index must be 1..${maxClusters}, got ${index}`);
  }
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > maxNodesPerCluster) {
    throw new RangeError(`nodes per cluster must be 1..${maxNodesPerCluster}, got ${nodes}`);
  }
  const podOctet = overlapPodCidrs ? 1 : index;
  const ks = Array.from({ length: nodes }, (_, k) => k);
  const v4 = {
    podCidr: `10.${podOctet}.0.0/16`,
    serviceCidr: `10.${100 + index}.0.0/16`,
    nodeIps: ks.map((k) => `172.16.${index}.${k + 1}`),
    nodePodCidrs: ks.map((k) => `10.${podOctet}.${k * 16}.0/20`),
  };
  if (ipFamily === 'ipv4') return v4;
  const v6 = {
    podCidr: `fd00:10:${podOctet}::/56`,
    serviceCidr: `fd00:10:${100 + index}::/108`,
    nodeIps: ks.map((k) => `fd00:172:16:${index}::${k + 1}`),
    nodePodCidrs: ks.map((k) => `fd00:10:${podOctet}:${k}::/64`),
  };
  if (ipFamily === 'ipv6') return { ...v6, ipFamily };
  return {
    podCidr: `${v4.podCidr},${v6.podCidr}`,
    serviceCidr: `${v4.serviceCidr},${v6.serviceCidr}`,
    nodeIps: v4.nodeIps,
    nodePodCidrs: ks.map((k) => `${v4.nodePodCidrs[k]!},${v6.nodePodCidrs[k]!}`),
    ipFamily,
  };
}
