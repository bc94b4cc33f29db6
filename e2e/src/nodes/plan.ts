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
  readonly nodeIp: string;
  /** Prefix length of the fabric subnet (172.16.0.0/16) on the node's eth0. */
  readonly fabricPrefix: number;
  readonly podCidr: string;
  readonly podGateway: string;
  readonly serviceCidr: string;
  readonly dnsIp: string;
  /** The other clusters' pod ranges and the node IP they are routed through. */
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
  readonly nodeIp: string;
  readonly nodePodCidr: string;
  readonly serviceCidr: string;
}

/** The first address of a /N IPv4 network plus `offset`. */
export function addressIn(cidr: string, offset: number): string {
  const [base] = cidr.split('/');
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
    nodeIp: cluster.nodeIp,
    fabricPrefix: 16,
    podCidr: cluster.nodePodCidr,
    podGateway: addressIn(cluster.nodePodCidr, 1),
    serviceCidr: cluster.serviceCidr,
    dnsIp: addressIn(cluster.serviceCidr, 10),
    routes: all
      .filter((c) => c.name !== cluster.name)
      .map((c) => ({ dst: c.nodePodCidr, via: c.nodeIp })),
    cgroupRoot: `${prefix}${cluster.name}`,
    dir: join(stateDir, cluster.name, 'node'),
  };
}
