import { createHash } from 'node:crypto';
import type { ClusterIdentity, Protocol } from '../model/index.js';
import { cloudMapLimits } from '../ports/cloudmap-limits.js';

/**
 * A short, stable hash of the cluster's identity. Two clusters may reuse pod IPs (the AWS
 * controller's IDs collide then, docs/architecture.md#the-aws-controller, item 3), so every
 * instance ID we write starts with this prefix. 12 hex characters (48 bits) keep the longest
 * endpoint ID (SCTP, full-length IPv6, 5-digit port) at 63 characters.
 */
export function clusterPrefix(cluster: ClusterIdentity): string {
  return createHash('sha256')
    .update(`${cluster.clustersetId}/${cluster.clusterId}`)
    .digest('hex')
    .slice(0, 12);
}

/**
 * `<prefix>-tcp-10_0_0_5-80`: the AWS controller's ID form behind our cluster prefix. The port
 * is the *Service* port, not the endpoint port: a Service cannot have two ports with the same
 * protocol and number, so the ID is unique by construction even when two Service ports target
 * the same container port. An address whose text would overflow 64 characters (IPv4-mapped
 * IPv6 written out in full) is replaced by a hash of it, still deterministic.
 */
export function endpointInstanceId(
  cluster: ClusterIdentity,
  protocol: Protocol,
  address: string,
  servicePort: number,
): string {
  const prefix = clusterPrefix(cluster);
  const proto = protocol.toLowerCase();
  const id = `${prefix}-${proto}-${address.toLowerCase().replace(/[.:]/g, '_')}-${servicePort}`;
  if (id.length <= cloudMapLimits.instanceIdMaxLength) return id;
  const hashed = createHash('sha256').update(address.toLowerCase()).digest('hex').slice(0, 16);
  return `${prefix}-${proto}-a${hashed}-${servicePort}`;
}

/** The per-cluster export record of a service: one fixed ID per cluster. */
export function exportInstanceId(cluster: ClusterIdentity): string {
  return `${clusterPrefix(cluster)}-export`;
}

/** The per-cluster heartbeat instance in the namespace's `_mcs-heartbeat` service. */
export function heartbeatInstanceId(cluster: ClusterIdentity): string {
  return `${clusterPrefix(cluster)}-heartbeat`;
}
