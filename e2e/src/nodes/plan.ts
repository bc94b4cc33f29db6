import { createHash } from 'node:crypto';
import { join } from 'node:path';

/**
 * Names and addresses of a clusterset's real nodes. Every host-visible name (network
 * namespaces, cgroup roots) starts with a prefix derived from the state directory, so
 * clustersets in different state directories never share one and teardown finds exactly its
 * own. Addresses live only inside the clusterset's namespaces, so they may repeat across
 * clustersets.
 */
export interface RealNodePlan {
  readonly cluster: string;
  readonly index: number;
  readonly nodeName: string;
  /** Network namespace of the node (kubelet, containerd, kube-proxy, pods' bridge). */
  readonly netns: string;
  /** The clusterset's fabric namespace: one bridge joining every node (a flat L2, like a VPC). */
  readonly fabricNetns: string;
  /** Interface name of the node's link in the fabric namespace. */
  readonly fabricLink: string;
  /** The node's address of the primary family (the one the kubelet and kube-proxy bind). */
  readonly nodeIp: string;
  /** Every address of the node, primary family first (dual stack: IPv4, IPv6). */
  readonly nodeIps: readonly string[];
  /**
   * The node's addresses on eth0 with the fabric's prefix length: 172.16.0.0/16 and
   * fd00:172:16::/48 are one flat link joining every node.
   */
  readonly fabricAddresses: readonly string[];
  /** The node's pod ranges and their bridge gateways, one per family, primary first. */
  readonly podCidrs: readonly string[];
  readonly podGateways: readonly string[];
  /** The cluster's Service ranges as the API server flag takes them (comma-joined families). */
  readonly serviceCidr: string;
  /** The cluster DNS Service's IP, in the primary family's range. */
  readonly dnsIp: string;
  /** The other clusters' pod ranges and the node IP (same family) they are routed through. */
  readonly routes: readonly { readonly dst: string; readonly via: string }[];
  /** cgroup root of the kubelet (one per node: two kubelets must not share kubepods). */
  readonly cgroupRoot: string;
  /** Everything of the node on disk (containerd root and state, kubelet root, configs). */
  readonly dir: string;
}

export function netnsPrefix(stateDir: string): string {
  return `mcs-${createHash('sha256').update(stateDir).digest('hex').slice(0, 8)}-`;
}

export interface ClusterAddresses {
  readonly name: string;
  readonly index: number;
  /** One per family, primary first; nodePodCidrs in the same order. */
  readonly nodeIps: readonly string[];
  readonly nodePodCidrs: readonly string[];
  /** Comma-joined families, primary first. */
  readonly serviceCidr: string;
}

const isIpv6 = (address: string): boolean => address.includes(':');

/**
 * The first address of a network plus `offset`. IPv6 ranges here all end in `::` before the
 * prefix length (fd00:10:1:0::/64) and offsets are small, so the offset is the last group;
 * the URL parser writes the result in its canonical form (RFC 5952).
 */
export function addressIn(cidr: string, offset: number): string {
  const [base] = cidr.split('/');
  if (isIpv6(base!)) {
    if (!base!.endsWith('::') || offset > 0xffff) {
      throw new RangeError(`addressIn: ${cidr} + ${offset} is outside what the plan uses`);
    }
    return new URL(`http://[${base!}${offset.toString(16)}]/`).hostname.slice(1, -1);
  }
  const n = base!.split('.').reduce((acc, o) => acc * 256 + Number(o), 0) + offset;
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export function realNodePlan(
  stateDir: string,
  cluster: ClusterAddresses,
  all: readonly ClusterAddresses[],
): RealNodePlan {
  const prefix = netnsPrefix(stateDir);
  return {
    cluster: cluster.name,
    index: cluster.index,
    nodeName: `${cluster.name}-node-0`,
    netns: `${prefix}${cluster.name}`,
    fabricNetns: `${prefix}fabric`,
    fabricLink: `n-${cluster.name}`,
    nodeIp: cluster.nodeIps[0]!,
    nodeIps: cluster.nodeIps,
    fabricAddresses: cluster.nodeIps.map((ip) => `${ip}/${isIpv6(ip) ? 48 : 16}`),
    podCidrs: cluster.nodePodCidrs,
    podGateways: cluster.nodePodCidrs.map((c) => addressIn(c, 1)),
    serviceCidr: cluster.serviceCidr,
    dnsIp: addressIn(cluster.serviceCidr.split(',')[0]!, 10),
    routes: all
      .filter((c) => c.name !== cluster.name)
      .flatMap((c) => c.nodePodCidrs.map((dst, f) => ({ dst, via: c.nodeIps[f]! }))),
    cgroupRoot: `${prefix}${cluster.name}`,
    dir: join(stateDir, cluster.name, 'node'),
  };
}
