import {
  Attr,
  exportInstanceId,
  isEmptyPlan,
  planExport,
  type ClusterIdentity,
  type ExportPlan,
  type Logger,
} from '@cloudmap-mcs/core';
import { applyPlan } from './apply.js';
import type { CloudMapTarget } from './cloudmap-target.js';
import { discover, type ReconcilerState } from './reconciler-state.js';
import { declaredServices, readOwnShards } from './shards.js';

/** Removes this cluster's records of N/S; true once nothing of ours is left or in flight. */
export async function unexport(
  state: ReconcilerState,
  namespace: string,
  name: string,
  identity: ClusterIdentity,
  log: Logger,
): Promise<boolean> {
  const { deps } = state;
  const key = `${namespace}/${name}`;
  const deregister = async (t: CloudMapTarget, plan: ExportPlan, message: string) => {
    if (isEmptyPlan(plan)) return;
    log.info(message, { cloudMapService: t.serviceName, deregister: plan.deregister.length });
    await applyPlan(deps.cloudMap, deps.pending, t, plan, log);
    deps.onWritesSubmitted?.(namespace, name);
  };
  if (state.exported.delete(key)) deps.onExportsChanged?.(namespace);
  deps.peers?.unwatch(key);
  const target = await deps.resolver.find(namespace, name);
  if (target === undefined) return true;
  state.serviceKeys.set(target.serviceId, key);
  const { instances: observed } = await discover(state, target, {
    [Attr.ClustersetId]: identity.clustersetId,
    [Attr.ClusterId]: identity.clusterId,
  });
  // Shards first: the export record, which names them, goes only once they are empty.
  const span = declaredServices(observed, identity);
  const { targets, shards } = await readOwnShards(state, identity, namespace, name, span);
  let shardsLeft = 0;
  for (const [k, shard] of targets) {
    state.serviceKeys.set(shard.serviceId, key);
    const plan = planExport({ cluster: identity, desired: [], observed: shards.get(k) ?? [] });
    await deregister(shard, plan, 'deregistering shard records');
    shardsLeft += plan.deregister.length + deps.pending.count(shard.serviceId);
  }
  const all = planExport({ cluster: identity, desired: [], observed });
  const recordId = exportInstanceId(identity);
  const plan =
    shardsLeft === 0
      ? all
      : { register: [], deregister: all.deregister.filter((id) => id !== recordId) };
  await deregister(target, plan, 'deregistering exported records');
  return isEmptyPlan(plan) && deps.pending.count(target.serviceId) === 0 && shardsLeft === 0;
}
