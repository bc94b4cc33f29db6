import {
  Attr,
  fromShardInstance,
  isShardServiceName,
  mergeShardInstances,
  shardQuery,
  shardRefs,
  type CloudMapInstance,
} from '@cloudmap-mcs/core';
import type { ServiceSnapshot } from './snapshot.js';

/**
 * The poller's view of shard services (ADR 0015). A shard `_mcs-shard-<p>-<k>.S` is tracked
 * like any service (its revision is checked, its instances read), but it is never a service of
 * its own: its changes are changes of `S`, `get(ns, S)` returns S's instances merged with those
 * of every shard its export records name, and listings of services leave shards out. An
 * exporter's change feed names `S` only; reading `S` reads its shards.
 */

/** DiscoverInstances query parameters for a tracked service of this clusterset. */
export function queryFor(name: string, clustersetId: string): Record<string, string> {
  return isShardServiceName(name)
    ? shardQuery(clustersetId)
    : { [Attr.ClustersetId]: clustersetId };
}

/** Instances as the codec reads them (shard instances carry their clusterset id renamed). */
export function normalized(
  name: string,
  instances: readonly CloudMapInstance[],
): readonly CloudMapInstance[] {
  return isShardServiceName(name) ? instances.map(fromShardInstance) : instances;
}

/** Names of the shard services the base service's export records name (to track at once). */
export function referencedShards(base: ServiceSnapshot, clustersetId: string): string[] {
  if (isShardServiceName(base.name)) return [];
  return shardRefs(base.name, base.instances, clustersetId).map((r) => r.serviceName);
}

/**
 * S's snapshot as readers see it: its instances plus its shards' (read or not yet), known
 * good as of the oldest part, and failing when any part's last read failed.
 */
export function mergedSnapshot(
  base: ServiceSnapshot,
  clustersetId: string,
  shard: (name: string) => ServiceSnapshot | undefined,
): ServiceSnapshot {
  const refs = referencedShards(base, clustersetId);
  if (refs.length === 0) return base;
  const parts = refs.map(shard).filter((s): s is ServiceSnapshot => s !== undefined);
  const merged = mergeShardInstances(
    base.name,
    base.instances,
    clustersetId,
    (name) => parts.find((p) => p.name === name)?.instances,
  );
  const out: ServiceSnapshot = { ...base, instances: merged.instances };
  for (const p of parts) {
    if (p.confirmedAtMs !== undefined && (out.confirmedAtMs ?? Infinity) > p.confirmedAtMs)
      out.confirmedAtMs = p.confirmedAtMs;
    if (out.error === undefined && p.error !== undefined) out.error = p.error;
  }
  return out;
}
