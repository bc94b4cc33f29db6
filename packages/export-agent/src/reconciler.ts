import { randomBytes } from 'node:crypto';
import {
  Attr,
  checkInstances,
  logFields,
  decodeServiceInstances,
  detectConflicts,
  encodeClusterExport,
  isCloudMapError,
  isEmptyPlan,
  isOwnInstance,
  declaredShardCount,
  exportInstanceId,
  fromShardInstance,
  shardQuery,
  planExport,
  type CloudMapInstance,
  type CloudMapPort,
  type ClusterExport,
  type ClusterIdentity,
  type Logger,
  type ReconcileResult,
} from '@cloudmap-mcs/core';
import { isNotFound } from '@cloudmap-mcs/core/runtime';
import { applyPlan } from './apply.js';
import type { CloudMapTarget, TargetResolver } from './cloudmap-target.js';
import { findCondition, setConditions } from '@cloudmap-mcs/core';
import { createEventDedup } from './event-dedup.js';
import { buildDesiredExport } from './desired.js';
import { podLabelSourceFor } from './pod-label-source.js';
import { fitInstancesToService } from './dns-attributes.js';
import { conditionsFor, type ExportOutcome } from './export-status.js';
import type { ServiceExportObject } from './k8s-types.js';
import type { PeerWatch } from './peer-watch.js';
import type { PendingWrites } from './pending-writes.js';
import { FINALIZER, splitKey, type ExportSources, type ServiceExportWriter } from './sources.js';
import { shardingCondition, shardsPhrase, quotaHint, withoutServiceCount } from './shard-status.js';
import { writeShardedExport, shardTargetsOf } from './shards.js';

export interface ExportReconcilerDeps {
  sources: ExportSources;
  writer: ServiceExportWriter;
  cloudMap: CloudMapPort;
  resolver: TargetResolver;
  pending: PendingWrites;
  logger: Logger;
  now: () => Date;
  /** Re-check an exported key this often: other clusters' records change without a local event. */
  resyncMs: number;
  /** Re-check while Cloud Map operations or a namespace creation are in flight. */
  pendingRequeueMs: number;
  /**
   * Called when a Service of the namespace starts or stops being exported: the heartbeat
   * carries a digest of the exported names, so importers find new services within a fast poll.
   */
  onExportsChanged?: (namespace: string) => void;
  /**
   * Writes of N/S were just submitted (base, shards or un-export): the change feed announces
   * it early; the operations' completions announce it again (feed-writer.ts).
   */
  onWritesSubmitted?: (namespace: string, name: string) => void;
  /** Told which Cloud Map service each exported key uses, to requeue it on others' changes. */
  peers?: PeerWatch;
  /** `--pod-label-attributes`: label keys for ServiceExports without the annotation. */
  podLabelAttributes?: readonly string[];
}

export interface ExportReconciler {
  reconcile(key: string): Promise<ReconcileResult | void>;
  /** The key whose Cloud Map service has this ID, to requeue on an operation's completion. */
  keyForService(serviceId: string): string | undefined;
  /** Exported Service names by namespace (each such namespace gets a heartbeat). */
  exportsByNamespace(): Map<string, string[]>;
  /** How many ServiceExports are currently exported (metrics). */
  exportedCount(): number;
}

/** Cloud Map errors that a retry alone does not fix: shown as Ready=False/Failed. */
const PERSISTENT_ERRORS: ReadonlySet<string> = new Set([
  'InvalidInput',
  'ResourceLimitExceeded',
  'AccessDeniedException',
]);

const notFound = (e: unknown) =>
  isCloudMapError(e, 'ServiceNotFound') || isCloudMapError(e, 'NamespaceNotFound');

/** The export agent's reconcile of one ServiceExport key (DESIGN.md §3). */
export function createExportReconciler(deps: ExportReconcilerDeps): ExportReconciler {
  const { sources, writer, cloudMap, resolver, pending } = deps;
  const shardDeps = {
    cloudMap,
    resolver,
    pending,
    discover: (t: CloudMapTarget, q: Record<string, string>) => discover(t, q),
  };
  const serviceKeys = new Map<string, string>();
  const exported = new Map<string, string>();
  const events = createEventDedup(
    (se, type, reason, message) => writer.event(se, type, reason, message),
    () => deps.now().getTime(),
  );

  /** Instances (our in-flight writes laid over) and the revision read, if the service exists. */
  async function discover(
    target: CloudMapTarget,
    query: Record<string, string>,
  ): Promise<{ instances: CloudMapInstance[]; revision?: number }> {
    try {
      const { instances, revision } = await cloudMap.discoverInstances(
        target.namespaceName,
        target.serviceName,
        query,
      );
      return { instances: pending.overlay(target.serviceId, instances), revision };
    } catch (error) {
      if (notFound(error)) return { instances: pending.overlay(target.serviceId, []) };
      throw error;
    }
  }

  /** Removes this cluster's records of N/S; true once nothing of ours is left or in flight. */
  async function unexport(namespace: string, name: string, identity: ClusterIdentity, log: Logger) {
    if (exported.delete(`${namespace}/${name}`)) deps.onExportsChanged?.(namespace);
    deps.peers?.unwatch(`${namespace}/${name}`);
    const target = await resolver.find(namespace, name);
    if (target === undefined) return true;
    serviceKeys.set(target.serviceId, `${namespace}/${name}`);
    const { instances: observed } = await discover(target, {
      [Attr.ClustersetId]: identity.clustersetId,
      [Attr.ClusterId]: identity.clusterId,
    });
    // Shards first: the export record, which names them, goes only once they are empty.
    const shardsLeft = await unexportShards(namespace, name, identity, observed, log);
    const all = planExport({ cluster: identity, desired: [], observed });
    const recordId = exportInstanceId(identity);
    const plan =
      shardsLeft === 0
        ? all
        : { register: [], deregister: all.deregister.filter((id) => id !== recordId) };
    if (!isEmptyPlan(plan)) {
      log.info('deregistering exported records', { deregister: plan.deregister.length });
      await applyPlan(cloudMap, pending, target, plan, log);
      deps.onWritesSubmitted?.(namespace, name);
    }
    return isEmptyPlan(plan) && pending.count(target.serviceId) === 0 && shardsLeft === 0;
  }

  /** Deregisters this cluster's shard instances of N/S; how many are left or in flight. */
  async function unexportShards(
    namespace: string,
    name: string,
    identity: ClusterIdentity,
    baseObserved: readonly CloudMapInstance[],
    log: Logger,
  ): Promise<number> {
    const record = baseObserved.find((i) => i.id === exportInstanceId(identity));
    const declared = record === undefined ? 1 : (declaredShardCount(record.attributes) ?? 1);
    let left = 0;
    for (const shard of await shardTargetsOf({ resolver }, identity, namespace, name, declared)) {
      serviceKeys.set(shard.serviceId, `${namespace}/${name}`);
      const { instances } = await discover(shard, {
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
        await applyPlan(cloudMap, pending, shard, plan, log);
        deps.onWritesSubmitted?.(namespace, name);
      }
      left += plan.deregister.length + pending.count(shard.serviceId);
    }
    return left;
  }

  async function writeStatus(se: ServiceExportObject, outcome: ExportOutcome, log: Logger) {
    const current = se.status?.conditions ?? [];
    const desired = conditionsFor(outcome, se.metadata.generation);
    const { conditions, changed } = setConditions(current, desired, deps.now());
    if (!changed) return;
    await writer.writeConditions(se, conditions);
    log.debug('status written', { outcome: outcome.kind });
    // Events mark transitions only, so a steady state does not flood the event stream.
    const before = findCondition(current, 'Conflict');
    const after = findCondition(conditions, 'Conflict');
    if (after?.status === 'True' && (before?.status !== 'True' || before.reason !== after.reason)) {
      events.event(se, 'Warning', 'ExportConflict', `${after.reason}: ${after.message}`);
    }
    const ready = findCondition(conditions, 'Ready');
    const wasReady = findCondition(current, 'Ready');
    if (outcome.kind === 'failed' && wasReady?.message !== ready?.message) {
      events.event(se, 'Warning', 'ExportFailed', outcome.message);
    }
    if (outcome.kind === 'invalid' && findCondition(current, 'Valid')?.reason !== outcome.reason) {
      events.event(se, 'Warning', outcome.reason, outcome.message);
    }
    if (outcome.kind === 'exported' && wasReady?.status !== 'True') {
      events.event(se, 'Normal', 'Exported', outcome.message);
    }
  }

  async function reconcileExport(
    se: ServiceExportObject,
    identity: ClusterIdentity,
    log: Logger,
  ): Promise<ReconcileResult | void> {
    const { namespace, name } = se.metadata;
    if (!(se.metadata.finalizers ?? []).includes(FINALIZER))
      await writer.addFinalizer(se, FINALIZER);
    // A new export of objects the caches hold only as stubs: they are being read.
    if (sources.loading?.(namespace, name) === true)
      return { requeueAfterMs: deps.pendingRequeueMs };
    const svc = sources.service(namespace, name);
    const pods = podLabelSourceFor(se, deps.podLabelAttributes ?? [], sources);
    if (pods.refused !== undefined) {
      // Never trimmed, never half-applied: the records written last stay as they are.
      await writeStatus(se, { kind: 'failed', message: pods.refused }, log);
      return;
    }
    if (pods.waiting === true) {
      // A first export says why it waits (e.g. no RBAC for pods); an established one keeps
      // Ready=True through an agent restart instead of flapping to Pending and back.
      if (findCondition(se.status?.conditions, 'Ready')?.status !== 'True') {
        const message =
          'Waiting for the pod watch (pod label attributes) to sync; the export agent needs get, list and watch on pods.';
        await writeStatus(se, { kind: 'pending', message }, log);
      }
      return { requeueAfterMs: deps.pendingRequeueMs };
    }
    const desired = buildDesiredExport(
      identity,
      se,
      svc,
      svc ? sources.endpointSlices(namespace, name) : [],
      pods.source,
    );
    if (!desired.valid) {
      const done = await unexport(namespace, name, identity, log);
      await writeStatus(
        se,
        { kind: 'invalid', reason: desired.reason, message: desired.message },
        log,
      );
      return done ? undefined : { requeueAfterMs: deps.pendingRequeueMs };
    }
    const encoded = encodeClusterExport(desired.export);
    // More instances than one Cloud Map service holds is not a problem: they are sharded.
    const problems = withoutServiceCount(encoded.problems);
    if (problems.length > 0) {
      // User input beyond Cloud Map's limits: a condition, no retry until the input changes.
      const message = `Cannot export: ${problems.map((p) => p.message).join('; ')}`;
      await writeStatus(se, { kind: 'failed', message: message.slice(0, 32_000) }, log);
      return;
    }
    try {
      return await exportToCloudMap(se, identity, desired.export, encoded.instances, log);
    } catch (error) {
      // A refusal that retrying will not fix is also shown on the ServiceExport; the error is
      // still thrown so the key backs off and is retried (the cause may be fixed outside).
      const cause = isCloudMapError(error) ? error : (error as { cause?: unknown }).cause;
      if (isCloudMapError(cause) && PERSISTENT_ERRORS.has(cause.code)) {
        const message =
          `Cloud Map refused ${cause.operation}: ${cause.code}: ${cause.message}` +
          quotaHint(cause.code, cause.message);
        await writeStatus(se, { kind: 'failed', message: message.slice(0, 1024) }, log);
      }
      throw error;
    }
  }

  /**
   * The encoded instances as the Cloud Map service needs them: unchanged for a service without
   * records; with DnsConfig/custom health the attributes Route 53 needs (ADR 0010). Undefined,
   * after a Failed condition, when the result no longer fits Cloud Map's limits.
   */
  async function fitToService(
    se: ServiceExportObject,
    target: CloudMapTarget,
    encoded: readonly CloudMapInstance[],
    log: Logger,
  ): Promise<CloudMapInstance[] | undefined> {
    const fit = fitInstancesToService(encoded, target);
    for (const s of fit.skipped) log.warn('endpoint not exported to a DNS service', s);
    const changed = target.dnsConfig !== undefined || target.customHealth === true;
    const problems = changed ? withoutServiceCount(checkInstances(fit.instances)) : [];
    if (problems.length === 0) return fit.instances;
    const message = `Cannot export: ${problems.map((p) => p.message).join('; ')}`;
    await writeStatus(se, { kind: 'failed', message: message.slice(0, 32_000) }, log);
    return undefined;
  }

  async function exportToCloudMap(
    se: ServiceExportObject,
    identity: ClusterIdentity,
    desiredExport: ClusterExport,
    encodedInstances: readonly CloudMapInstance[],
    log: Logger,
  ): Promise<ReconcileResult> {
    const { namespace, name } = se.metadata;
    // The Service's first family picks A or AAAA if the agent creates a DNS service.
    const family = desiredExport.properties.ipFamilies[0] ?? 'IPv4';
    const ensured = await resolver.ensure(namespace, name, family);
    if (ensured.state !== 'ready') {
      const failed = ensured.state === 'unsupported';
      await writeStatus(se, { kind: failed ? 'failed' : 'pending', message: ensured.message }, log);
      return { requeueAfterMs: failed ? deps.resyncMs : deps.pendingRequeueMs };
    }
    const { target } = ensured;
    serviceKeys.set(target.serviceId, `${namespace}/${name}`);
    if (!exported.has(`${namespace}/${name}`)) {
      exported.set(`${namespace}/${name}`, namespace);
      deps.onExportsChanged?.(namespace);
    }
    const fitted = await fitToService(se, target, encodedInstances, log);
    if (fitted === undefined) return { requeueAfterMs: deps.resyncMs };
    const read = await discover(target, { [Attr.ClustersetId]: identity.clustersetId });
    const observed = read.instances;
    const others: CloudMapInstance[] = observed.filter((i) => !isOwnInstance(i, identity));
    const otherClusters = [...new Set(others.map((i) => i.attributes[Attr.ClusterId] ?? ''))];
    deps.peers?.watch(`${namespace}/${name}`, target, read.revision, otherClusters);
    // One plan per Cloud Map service the export spans (just the base service unless it
    // outgrows it, ADR 0015); shards take the plain encoded instances, the base its fitted form.
    const written = await writeShardedExport(shardDeps, {
      identity,
      namespace,
      name,
      base: target,
      baseObserved: observed,
      desired: encodedInstances,
      forBase: (i) => fitInstancesToService([i], target).instances[0],
      log,
    });
    for (const id of written.shardServiceIds) serviceKeys.set(id, `${namespace}/${name}`);
    if ((written.submitted ?? 0) > 0) deps.onWritesSubmitted?.(namespace, name);
    if (written.problem !== undefined) {
      await writeStatus(se, { kind: 'failed', message: `Cannot export: ${written.problem}.` }, log);
      return { requeueAfterMs: deps.resyncMs };
    }
    if (written.waiting !== undefined) {
      await writeStatus(se, { kind: 'pending', message: written.waiting }, log);
      return { requeueAfterMs: deps.pendingRequeueMs };
    }
    const decoded = decodeServiceInstances(namespace, name, others, {
      clustersetId: identity.clustersetId,
    });
    const conflicts = detectConflicts([...decoded.exports, desiredExport]);
    const inFlight = written.inFlight;
    const where =
      `Cloud Map service ${target.namespaceName}/${target.serviceName}` +
      shardsPhrase(written.plan);
    const sharding = shardingCondition(written.plan, se.status?.conditions);
    // Once exported, writes in flight are updates (an endpoint moved), not a problem: Ready
    // stays True instead of dropping to Pending and back (two status writes) on every
    // change. Pending is only for the first export; failures still report Failed.
    const established = findCondition(se.status?.conditions, 'Ready')?.status === 'True';
    await writeStatus(
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
    return { requeueAfterMs: settling ? deps.pendingRequeueMs : deps.resyncMs };
  }

  return {
    async reconcile(key) {
      // One child logger per reconcile (GUIDE.md rule 14).
      const log = deps.logger.child({
        [logFields.key]: key,
        [logFields.reconcileId]: randomBytes(4).toString('hex'),
      });
      try {
        return await reconcileKey(key, log);
      } catch (error) {
        // The only Kubernetes calls here are writes to the ServiceExport itself. Not found: it
        // is gone, e.g. the finalizer we removed let it go and this reconcile read a cache that
        // still held it. Its delete event runs the key again (un-exporting if needed), so this
        // is a no-op, not a failure.
        if (isNotFound(error)) {
          log.debug('ServiceExport already gone');
          return;
        }
        throw error;
      }
    },
    keyForService: (serviceId) => serviceKeys.get(serviceId),
    exportsByNamespace: () => {
      const byNamespace = new Map<string, string[]>();
      for (const [key, namespace] of exported) {
        const names = byNamespace.get(namespace) ?? [];
        names.push(key.slice(namespace.length + 1));
        byNamespace.set(namespace, names);
      }
      return byNamespace;
    },
    exportedCount: () => exported.size,
  };

  async function reconcileKey(key: string, log: Logger): Promise<ReconcileResult | void> {
    const [namespace, name] = splitKey(key);
    const identity = sources.identity();
    if (identity === undefined) return { requeueAfterMs: deps.pendingRequeueMs };
    const se = sources.serviceExport(namespace, name);
    if (se === undefined || se.metadata.deletionTimestamp !== undefined) {
      const done = await unexport(namespace, name, identity, log);
      if (!done) return { requeueAfterMs: deps.pendingRequeueMs };
      if (se !== undefined && (se.metadata.finalizers ?? []).includes(FINALIZER)) {
        await writer.removeFinalizer(se, FINALIZER);
        events.forget(namespace, name);
        log.info('export removed');
      }
      return;
    }
    return reconcileExport(se, identity, log);
  }
}
