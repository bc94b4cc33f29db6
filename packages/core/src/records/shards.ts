import type { ClusterIdentity } from '../model/index.js';
import type { CloudMapInstance } from '../ports/index.js';
import { Attr } from './attributes.js';
import { clusterPrefix } from './ids.js';

/**
 * Shard services (ADR 0015, docs/cloudmap-schema.md "Shards"): a Cloud Map service holds at
 * most 1,000 instances (hard quota), so a cluster that exports more endpoint instances than fit
 * in the base service `S` spreads the rest over services of its own,
 * `_mcs-shard-<cluster prefix>-<k>.S` (k = 1, 2, …). The base service keeps every cluster's
 * export record, which says how many services the export spans (`MCS_SHARD_COUNT`), so a
 * reader learns the shard names from the base service alone.
 *
 * Shard instances are our endpoint instances with one attribute renamed: `CLUSTERSET_ID`
 * becomes `MCS_SHARD_CLUSTERSET_ID`. Readers that query `CLUSTERSET_ID=<own>` (the AWS Go
 * controller, importers from before shards) therefore find a shard service empty and skip it,
 * instead of importing it as a Service named `_mcs-shard-…`; they see the base service's subset.
 */

export const ShardAttr = {
  /** Export record: the number of services this cluster's export spans (base + shards), ≥ 2. */
  Count: 'MCS_SHARD_COUNT',
  /** Shard instances: the clusterset id, under a name that `CLUSTERSET_ID=` queries miss. */
  ClustersetId: 'MCS_SHARD_CLUSTERSET_ID',
} as const;

export const SHARD_SERVICE_PREFIX = '_mcs-shard-';

/**
 * The most services one cluster's export may span: 100 × 1,000 endpoint instances is far past
 * the namespace quota anyone runs; the bound keeps a hostile `MCS_SHARD_COUNT` from making a
 * reader call Cloud Map without end.
 */
export const MAX_SHARD_COUNT = 100;

/**
 * `_mcs-shard-<12 hex>-<k>.<S>`: the leading `_` and the dot make it impossible as a
 * Kubernetes Service name (an RFC 1035 label), so it never collides with a user's service; it
 * is within Cloud Map's service name rules (labels of `[A-Za-z0-9_-]`, ≤ 63 each, ≤ 127 in all:
 * 27 + 1 + 63 at most). The cluster prefix makes each shard service one cluster's alone, so
 * clusters never compete for a shard's 1,000 places.
 */
export function shardServiceName(
  cluster: ClusterIdentity,
  baseName: string,
  index: number,
): string {
  if (!Number.isInteger(index) || index < 1 || index >= MAX_SHARD_COUNT)
    throw new RangeError(`shard index ${index} is outside 1..${MAX_SHARD_COUNT - 1}`);
  return `${SHARD_SERVICE_PREFIX}${clusterPrefix(cluster)}-${index}.${baseName}`;
}

export interface ParsedShardName {
  /** The writer's cluster prefix (12 hex characters). */
  prefix: string;
  index: number;
  /** The Kubernetes Service the shard belongs to. */
  baseName: string;
}

const SHARD_NAME = /^_mcs-shard-([0-9a-f]{12})-([1-9][0-9]?)\.([a-z]([-a-z0-9]{0,61}[a-z0-9])?)$/;

/** The parts of a shard service name, or undefined for any other name. */
export function parseShardServiceName(name: string): ParsedShardName | undefined {
  const m = SHARD_NAME.exec(name);
  if (m === null) return undefined;
  return { prefix: m[1]!, index: Number(m[2]), baseName: m[3]! };
}

export const isShardServiceName = (name: string): boolean => name.startsWith(SHARD_SERVICE_PREFIX);

/** The base service's name for a shard service, the name itself for any other service. */
export function baseServiceName(name: string): string {
  return parseShardServiceName(name)?.baseName ?? name;
}

/** The instance as stored in a shard service (see the module comment). */
export function toShardInstance(instance: CloudMapInstance): CloudMapInstance {
  const { [Attr.ClustersetId]: clustersetId, ...rest } = instance.attributes;
  if (clustersetId === undefined) return instance;
  return { id: instance.id, attributes: { ...rest, [ShardAttr.ClustersetId]: clustersetId } };
}

/** A shard service's instance as the codec reads it (the inverse of `toShardInstance`). */
export function fromShardInstance(instance: CloudMapInstance): CloudMapInstance {
  const { [ShardAttr.ClustersetId]: clustersetId, ...rest } = instance.attributes;
  if (clustersetId === undefined || Attr.ClustersetId in rest) return instance;
  return { id: instance.id, attributes: { ...rest, [Attr.ClustersetId]: clustersetId } };
}

/** DiscoverInstances query parameters that find a clusterset's instances in a shard service. */
export const shardQuery = (clustersetId: string): Record<string, string> => ({
  [ShardAttr.ClustersetId]: clustersetId,
});

/**
 * The shard count an export record declares: 1 when absent; undefined when malformed or out of
 * range (a reader then uses the base service only and reports it).
 */
export function declaredShardCount(
  attributes: Readonly<Record<string, string>>,
): number | undefined {
  const value = attributes[ShardAttr.Count];
  if (value === undefined) return 1;
  if (!/^[1-9][0-9]{0,2}$/.test(value)) return undefined;
  const n = Number(value);
  return n <= MAX_SHARD_COUNT ? n : undefined;
}

/** One shard service a reader must read, named by the export record of `cluster`. */
export interface ShardRef {
  cluster: ClusterIdentity;
  index: number;
  serviceName: string;
}

/**
 * The shard services the export records in a base service refer to, for one clusterset. Only
 * our own export records count (`MCS_RECORD=export`), each naming shards 1..count-1 of its
 * cluster; the names are computed, never read, so a record cannot point a reader elsewhere.
 */
export function shardRefs(
  baseName: string,
  baseInstances: readonly CloudMapInstance[],
  clustersetId: string,
): ShardRef[] {
  const refs: ShardRef[] = [];
  for (const { attributes } of baseInstances) {
    if (attributes[Attr.Record] !== 'export') continue;
    const clusterId = attributes[Attr.ClusterId];
    if (clusterId === undefined || clusterId === '') continue;
    if (attributes[Attr.ClustersetId] !== clustersetId) continue;
    const count = declaredShardCount(attributes) ?? 1;
    const cluster = { clusterId, clustersetId };
    for (let index = 1; index < count; index++) {
      refs.push({ cluster, index, serviceName: shardServiceName(cluster, baseName, index) });
    }
  }
  return refs.sort((a, b) => (a.serviceName < b.serviceName ? -1 : 1));
}

export interface ShardMergeResult {
  /** The base service's instances followed by every referenced shard's endpoint instances. */
  instances: CloudMapInstance[];
  /** Shard instances left out: not an endpoint, or not of the shard's own cluster. */
  rejected: { serviceName: string; instanceId: string; reason: string }[];
  /** Referenced shard services not read yet (a reader reads them and merges again). */
  missing: string[];
}

/**
 * One Kubernetes Service's instances as the codec reads them: the base service's plus the
 * endpoint instances of each shard its export records name. A shard contributes only endpoint
 * instances of the cluster whose prefix it carries (a shard is one cluster's alone); a shard
 * that is no longer named (the count went down) contributes nothing, so instances left in it
 * are never imported. An instance found in both the base service and a shard (mid-move) is a
 * duplicate row of one endpoint, which the decoder merges.
 */
export function mergeShardInstances(
  baseName: string,
  baseInstances: readonly CloudMapInstance[],
  clustersetId: string,
  readShard: (serviceName: string) => readonly CloudMapInstance[] | undefined,
): ShardMergeResult {
  const instances = [...baseInstances];
  const rejected: ShardMergeResult['rejected'] = [];
  const missing: string[] = [];
  for (const ref of shardRefs(baseName, baseInstances, clustersetId)) {
    const shard = readShard(ref.serviceName);
    if (shard === undefined) {
      missing.push(ref.serviceName);
      continue;
    }
    for (const raw of shard) {
      const instance = fromShardInstance(raw);
      const a = instance.attributes;
      const reason =
        a[Attr.Record] !== 'endpoint'
          ? 'not an endpoint instance'
          : a[Attr.ClusterId] !== ref.cluster.clusterId || a[Attr.ClustersetId] !== clustersetId
            ? `not a record of cluster ${ref.cluster.clusterId}`
            : undefined;
      if (reason === undefined) instances.push(instance);
      else rejected.push({ serviceName: ref.serviceName, instanceId: instance.id, reason });
    }
  }
  return { instances, rejected, missing };
}
