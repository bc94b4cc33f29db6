import {
  Attr,
  checkInstances,
  decodeServiceInstances,
  detectConflicts,
  findCondition,
  isOwnInstance,
  type CloudMapInstance,
  type ClusterExport,
  type ClusterIdentity,
  type Logger,
  type ReconcileResult,
} from '@cloudmap-mcs/core';
import type { CloudMapTarget } from './cloudmap-target.js';
import { fitInstancesToService } from './dns-attributes.js';
import type { ServiceExportObject } from './k8s-types.js';
import { discover, resyncAfterMs, type ReconcilerState } from './reconciler-state.js';
import { refusal, shardingCondition, shardsPhrase } from './shard-status.js';
import { writeShardedExport, type ShardedExportResult } from './shards.js';
import { writeStatus } from './status-writer.js';

/**
 * Writes a valid export to Cloud Map: ensures its service, plans and submits this cluster's
 * records (sharded if they outgrow one service) and reports the outcome on the ServiceExport.
 */
export async function exportToCloudMap(
  state: ReconcilerState,
  se: ServiceExportObject,
  identity: ClusterIdentity,
  desiredExport: ClusterExport,
  encodedInstances: readonly CloudMapInstance[],
  log: Logger,
): Promise<ReconcileResult> {
  const { deps } = state;
  const { namespace, name } = se.metadata;
  const key = `${namespace}/${name}`;
  // A single-family Service picks A or AAAA if the agent creates a DNS service. A dual-stack
  // one gets a service without records: A+AAAA would need both addresses in every instance,
  // and an instance holds one endpoint's one address, so one family would be left out of the
  // export (docs/dns-namespaces.md).
  const families = desiredExport.properties.ipFamilies;
  const family = families.length > 1 ? undefined : (families[0] ?? 'IPv4');
  const ensured = await deps.resolver.ensure(namespace, name, family);
  if (ensured.state !== 'ready') {
    const failed = ensured.state === 'unsupported';
    const kind = failed ? 'failed' : 'pending';
    await writeStatus(state, se, { kind, message: ensured.message }, log);
    return { requeueAfterMs: failed ? resyncAfterMs(state) : deps.pendingRequeueMs };
  }
  const { target } = ensured;
  state.serviceKeys.set(target.serviceId, key);
  if (!state.exported.has(key)) {
    state.exported.add(key);
    deps.onExportsChanged?.(namespace);
  }
  const fitted = await fitToService(state, se, target, encodedInstances, log);
  if (fitted === undefined) return { requeueAfterMs: resyncAfterMs(state) };
  const read = await discover(state, target, { [Attr.ClustersetId]: identity.clustersetId });
  const observed = read.instances;
  const others: CloudMapInstance[] = observed.filter((i) => !isOwnInstance(i, identity));
  const otherClusters = [...new Set(others.map((i) => i.attributes[Attr.ClusterId] ?? ''))];
  deps.peers?.watch(key, target, read.revision, otherClusters);
  // One plan per Cloud Map service the export spans (just the base service unless it
  // outgrows it, ADR 0015); shards take the plain encoded instances, the base its fitted form.
  const written = await writeShardedExport(state, {
    identity,
    namespace,
    name,
    base: target,
    baseObserved: observed,
    desired: encodedInstances,
    forBase: (i) => fitInstancesToService([i], target).instances[0],
    log,
  });
  for (const id of written.shardServiceIds) state.serviceKeys.set(id, key);
  if ((written.submitted ?? 0) > 0) deps.onWritesSubmitted?.(namespace, name);
  return reportWritten(state, se, identity, desiredExport, target, others, written, log);
}

/**
 * The encoded instances as the Cloud Map service needs them: unchanged for a service without
 * records; with DnsConfig/custom health the attributes Route 53 needs (ADR 0010). Undefined,
 * after a Failed condition, when the result no longer fits Cloud Map's limits.
 */
async function fitToService(
  state: ReconcilerState,
  se: ServiceExportObject,
  target: CloudMapTarget,
  encoded: readonly CloudMapInstance[],
  log: Logger,
): Promise<CloudMapInstance[] | undefined> {
  const fit = fitInstancesToService(encoded, target);
  for (const s of fit.skipped) log.warn('endpoint not exported to a DNS service', s);
  const changed = target.dnsConfig !== undefined || target.customHealth === true;
  const refused = changed ? refusal(checkInstances(fit.instances)) : undefined;
  if (refused === undefined) return fit.instances;
  await writeStatus(state, se, { kind: 'failed', message: refused }, log);
  return undefined;
}

/** The ServiceExport's status after the writes were submitted, and when to look again. */
async function reportWritten(
  state: ReconcilerState,
  se: ServiceExportObject,
  identity: ClusterIdentity,
  desiredExport: ClusterExport,
  target: CloudMapTarget,
  others: readonly CloudMapInstance[],
  written: ShardedExportResult,
  log: Logger,
): Promise<ReconcileResult> {
  const { deps } = state;
  const { namespace, name } = se.metadata;
  if (written.problem !== undefined) {
    const message = `Cannot export: ${written.problem}.`;
    await writeStatus(state, se, { kind: 'failed', message }, log);
    return { requeueAfterMs: resyncAfterMs(state) };
  }
  if (written.waiting !== undefined) {
    await writeStatus(state, se, { kind: 'pending', message: written.waiting }, log);
    return { requeueAfterMs: deps.pendingRequeueMs };
  }
  const decoded = decodeServiceInstances(namespace, name, others, {
    clustersetId: identity.clustersetId,
  });
  const conflicts = detectConflicts([...decoded.exports, desiredExport]);
  const inFlight = written.inFlight;
  const where =
    `Cloud Map service ${target.namespaceName}/${target.serviceName}` + shardsPhrase(written.plan);
  const sharding = shardingCondition(written.plan, se.status?.conditions);
  // Once exported, writes in flight are updates (an endpoint moved), not a problem: Ready
  // stays True instead of dropping to Pending and back (two status writes) on every
  // change. Pending is only for the first export; failures still report Failed.
  const established = findCondition(se.status?.conditions, 'Ready')?.status === 'True';
  await writeStatus(
    state,
    se,
    inFlight > 0 && !established
      ? {
          kind: 'pending',
          message: `Waiting for Cloud Map to apply changes to ${where}.`,
          conflicts,
          ...sharding,
        }
      : { kind: 'exported', message: `Exported to ${where}.`, conflicts, ...sharding },
    log,
  );
  // Moved instances keep their old copy until the new one is confirmed: look again soon.
  const settling = inFlight > 0 || (written.plan?.heldBack ?? 0) > 0;
  return { requeueAfterMs: settling ? deps.pendingRequeueMs : resyncAfterMs(state) };
}
