import {
  Attr,
  declaredShardCount,
  fromShardInstance,
  isOwnInstance,
  planShardedExport,
  shardQuery,
  shardServiceName,
  toShardInstance,
  type CloudMapInstance,
  type ClusterIdentity,
  type Logger,
  type ShardPlan,
} from '@cloudmap-mcs/core';
import { applyPlan } from './apply.js';
import type { CloudMapTarget } from './cloudmap-target.js';
import { discover, type ReconcilerState } from './reconciler-state.js';

/**
 * The export reconciler's one step for shards (ADR 0015): read this cluster's shard services,
 * plan the placement (pure, `planShardedExport`), create the shard services it needs and apply
 * each service's plan, base first (its export record names the shards). An export that fits
 * one service takes exactly the path it took before shards: one plan for the base service.
 */

export interface ShardedExportInput {
  identity: ClusterIdentity;
  namespace: string;
  name: string;
  base: CloudMapTarget;
  /** Everything observed in the base service for this clusterset. */
  baseObserved: readonly CloudMapInstance[];
  /** This cluster's encoded instances (export record first), as plain services take them. */
  desired: readonly CloudMapInstance[];
  /** The base service's form of an instance (DNS attributes), undefined to leave it out. */
  forBase: (instance: CloudMapInstance) => CloudMapInstance | undefined;
  log: Logger;
}

export interface ShardedExportResult {
  /** Set when nothing could be written (no room even for the export record). */
  problem?: string;
  /** A shard service is still being created (namespace pending): try again shortly. */
  waiting?: string;
  plan?: ShardPlan;
  /** Cloud Map service IDs of the shards in use, so operation completions requeue the key. */
  shardServiceIds: string[];
  /** Writes in flight over the base and every shard service. */
  inFlight: number;
  /** Writes this call submitted (the change feed announces the service when > 0). */
  submitted?: number;
}

export async function writeShardedExport(
  state: ReconcilerState,
  input: ShardedExportInput,
): Promise<ShardedExportResult> {
  const { identity, base, log } = input;
  const { pending } = state.deps;
  const { targets, shards } = await readShards(state, input);
  const inFlight = () =>
    pending.count(base.serviceId) +
    [...targets.values()].reduce((n, t) => n + pending.count(t.serviceId), 0);
  const plan = planShardedExport({
    cluster: identity,
    desired: input.desired,
    base: input.baseObserved,
    shards,
    settled: inFlight() === 0,
    forBase: input.forBase,
  });
  const result = (outcome: Partial<ShardedExportResult>): ShardedExportResult => ({
    plan,
    shardServiceIds: [...targets.values()].map((t) => t.serviceId),
    inFlight: inFlight(),
    ...outcome,
  });
  if (plan.problem !== undefined) return result({ problem: plan.problem });
  const waiting = await ensureShardServices(state, input, plan, targets);
  if (waiting !== undefined) return result({ waiting });
  const submitted = await applyShardPlans(state, input, plan, targets);
  if (plan.heldBack > 0) {
    log.debug('moved instances keep their old copy until the new one is confirmed', {
      heldBack: plan.heldBack,
    });
  }
  return result({ submitted });
}

/**
 * The shard services an export uses: a first plan without shard reads tells how many services
 * the export needs now; the shards read are those needed or still declared (which may hold
 * instances to move back).
 */
async function readShards(state: ReconcilerState, input: ShardedExportInput) {
  const { identity, namespace, name } = input;
  const dry = planShardedExport({
    cluster: identity,
    desired: input.desired,
    base: input.baseObserved,
    shards: new Map(),
    settled: false,
  });
  const span = Math.max(declaredServices(input.baseObserved, identity), dry.neededCount);
  return readOwnShards(state, identity, namespace, name, span);
}

/** How many Cloud Map services this cluster's export record among `observed` declares. */
export function declaredServices(
  observed: readonly CloudMapInstance[],
  identity: ClusterIdentity,
): number {
  const record = observed.find(
    (i) => isOwnInstance(i, identity) && i.attributes[Attr.Record] === 'export',
  );
  return record === undefined ? 1 : (declaredShardCount(record.attributes) ?? 1);
}

/** The shard services 1..span-1 of N/S that exist, and this cluster's instances in each. */
export async function readOwnShards(
  state: ReconcilerState,
  identity: ClusterIdentity,
  namespace: string,
  name: string,
  span: number,
): Promise<{ targets: Map<number, CloudMapTarget>; shards: Map<number, CloudMapInstance[]> }> {
  const targets = new Map<number, CloudMapTarget>();
  const shards = new Map<number, CloudMapInstance[]>();
  for (let k = 1; k < span; k++) {
    const target = await state.deps.resolver.find(namespace, shardServiceName(identity, name, k));
    if (target === undefined) continue;
    targets.set(k, target);
    const { instances } = await discover(state, target, {
      ...shardQuery(identity.clustersetId),
      [Attr.ClusterId]: identity.clusterId,
    });
    shards.set(
      k,
      instances.map(fromShardInstance).filter((i) => isOwnInstance(i, identity)),
    );
  }
  return { targets, shards };
}

/**
 * Shard services exist before the export record that names them is written, so readers
 * never look for a shard that is not there yet. Returns why it must wait, if it must.
 */
async function ensureShardServices(
  state: ReconcilerState,
  input: ShardedExportInput,
  plan: ShardPlan,
  targets: Map<number, CloudMapTarget>,
): Promise<string | undefined> {
  const { identity, namespace, name, log } = input;
  for (const service of plan.services) {
    if (service.index === 0 || targets.has(service.index)) continue;
    if (service.plan.register.length === 0) continue;
    const shardName = shardServiceName(identity, name, service.index);
    // Shards are plain services (no DnsConfig): readers reach them through the API only.
    const ensured = await state.deps.resolver.ensure(namespace, shardName);
    if (ensured.state !== 'ready') return ensured.message;
    targets.set(service.index, ensured.target);
    log.info('shard service in use', { cloudMapService: shardName, shard: service.index });
  }
  return undefined;
}

/** Applies each service's plan (shards in their own instance form); the writes submitted. */
async function applyShardPlans(
  state: ReconcilerState,
  input: ShardedExportInput,
  plan: ShardPlan,
  targets: ReadonlyMap<number, CloudMapTarget>,
): Promise<number> {
  let submitted = 0;
  for (const service of plan.services) {
    const { register, deregister } = service.plan;
    if (register.length === 0 && deregister.length === 0) continue;
    const target = service.index === 0 ? input.base : targets.get(service.index);
    if (target === undefined) continue; // nothing of ours there and nothing to register
    const shardForm = { register: register.map(toShardInstance), deregister };
    await applyPlan(
      state.deps.cloudMap,
      state.deps.pending,
      target,
      service.index === 0 ? service.plan : shardForm,
      input.log,
    );
    submitted += register.length + deregister.length;
  }
  return submitted;
}
