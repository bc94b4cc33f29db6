import {
  Attr,
  declaredShardCount,
  exportInstanceId,
  fromShardInstance,
  isEmptyPlan,
  planExport,
  shardQuery,
  type CloudMapInstance,
  type ClusterIdentity,
  type Logger,
} from '@cloudmap-mcs/core';
import { applyPlan } from './apply.js';
import { discover, type ReconcilerState } from './reconciler-state.js';
import { shardTargetsOf } from './shards.js';

/** Removes this cluster's records of N/S; true once nothing of ours is left or in flight. */
export async function unexport(
  state: ReconcilerState,
  namespace: string,
  name: string,
  identity: ClusterIdentity,
  log: Logger,
): Promise<boolean> {
  const { deps } = state;
  if (state.exported.delete(`${namespace}/${name}`)) deps.onExportsChanged?.(namespace);
  deps.peers?.unwatch(`${namespace}/${name}`);
  const target = await deps.resolver.find(namespace, name);
  if (target === undefined) return true;
  state.serviceKeys.set(target.serviceId, `${namespace}/${name}`);
  const { instances: observed } = await discover(state, target, {
    [Attr.ClustersetId]: identity.clustersetId,
    [Attr.ClusterId]: identity.clusterId,
  });
  // Shards first: the export record, which names them, goes only once they are empty.
  const shardsLeft = await unexportShards(state, namespace, name, identity, observed, log);
  const all = planExport({ cluster: identity, desired: [], observed });
  const recordId = exportInstanceId(identity);
  const plan =
    shardsLeft === 0
      ? all
      : { register: [], deregister: all.deregister.filter((id) => id !== recordId) };
  if (!isEmptyPlan(plan)) {
    log.info('deregistering exported records', { deregister: plan.deregister.length });
    await applyPlan(deps.cloudMap, deps.pending, target, plan, log);
    deps.onWritesSubmitted?.(namespace, name);
  }
  return isEmptyPlan(plan) && deps.pending.count(target.serviceId) === 0 && shardsLeft === 0;
}

/** Deregisters this cluster's shard instances of N/S; how many are left or in flight. */
async function unexportShards(
  state: ReconcilerState,
  namespace: string,
  name: string,
  identity: ClusterIdentity,
  baseObserved: readonly CloudMapInstance[],
  log: Logger,
): Promise<number> {
  const { deps } = state;
  const record = baseObserved.find((i) => i.id === exportInstanceId(identity));
  const declared = record === undefined ? 1 : (declaredShardCount(record.attributes) ?? 1);
  const shards = await shardTargetsOf(deps, identity, namespace, name, declared);
  let left = 0;
  for (const shard of shards) {
    state.serviceKeys.set(shard.serviceId, `${namespace}/${name}`);
    const { instances } = await discover(state, shard, {
      ...shardQuery(identity.clustersetId),
      [Attr.ClusterId]: identity.clusterId,
    });
    const observed = instances.map(fromShardInstance);
    const plan = planExport({ cluster: identity, desired: [], observed });
    if (!isEmptyPlan(plan)) {
      log.info('deregistering shard records', {
        cloudMapService: shard.serviceName,
        deregister: plan.deregister.length,
      });
      await applyPlan(deps.cloudMap, deps.pending, shard, plan, log);
      deps.onWritesSubmitted?.(namespace, name);
    }
    left += plan.deregister.length + deps.pending.count(shard.serviceId);
  }
  return left;
}
