import {
  applyHeartbeats,
  createRefusalLog,
  decodeHeartbeats,
  decodeServiceInstances,
  derivedServiceName,
  LABEL_MCS_SERVICE_NAME,
  logFields,
  mergeExports,
  planSlices,
  realClock,
  trustExport,
  trustInstances,
  type ClusterExport,
  type Clock,
  type EventRecorder,
  type Logger,
  type MergedImport,
  type ReconcileResult,
  type Reconciler,
  type Refusal,
  type RefusalLog,
  type TrustPolicy,
} from '@cloudmap-mcs/core';
import type { CloudMapSnapshot } from '../poller/snapshot.js';
import {
  clustersetIps,
  derivedServiceTypeChanged,
  desiredDerivedService,
  desiredServiceImport,
  needsApply,
  observedSlice,
  sliceObject,
} from './desired.js';
import { createCollisionReporter, type CollisionMetrics } from './collisions.js';
import type { ServiceObject } from './k8s-types.js';
import {
  collisionOf,
  describeCollisions,
  missingMarker,
  type NameCollision,
  type OwnedKind,
} from './ownership.js';
import {
  NamespaceTerminatingError,
  splitKey,
  type ImportSources,
  type ImportWriter,
  type LiveKinds,
} from './ports.js';
import {
  createImportAdmission,
  DEFAULT_IMPORT_CAPS,
  defaultNamespacePolicy,
  namespaceDecision,
  serviceNameProblem,
  type ImportCaps,
  type NamespacePolicy,
} from './scope.js';
import { createRecentWrites, type RecentWrites, type Used } from './recent-writes.js';
import { desiredStatus, readyCondition } from './status.js';

export interface ImportMetrics extends CollisionMetrics {
  refused?(reason: string): void;
  written?(kind: string, verb: 'apply' | 'delete'): void;
  staleClusters?(namespace: string, name: string, count: number): void;
}

export interface ImportReconcilerDeps {
  sources: ImportSources;
  writer: ImportWriter;
  snapshot: CloudMapSnapshot;
  trust: TrustPolicy;
  heartbeatTtlMs: number;
  /** Wall-clock ms since the epoch (status times; liveness uses the snapshot's read times). */
  now: () => number;
  logger: Logger;
  metrics?: ImportMetrics;
  maxEndpointsPerSlice?: number;
  /** Value of endpointslice.kubernetes.io/managed-by on our slices. */
  sliceManagedBy?: string;
  /** Our writes laid over the informer cache until it catches up (see recent-writes.ts). */
  recent?: RecentWrites;
  /** Monotonic time for `recent` and the refusal log (defaults to the real clock). */
  clock?: Clock;
  /**
   * Counts and logs (rate-limited) everything refused; defaults to one over `logger` and
   * `metrics.refused`. Shared so other refusals (namespace policy) use the same metric and log.
   */
  refusals?: RefusalLog;
  /** Warning Events about name collisions (none recorded when absent). */
  events?: EventRecorder;
  /** Where imports may exist (scope.ts); default: all but the four built-in denied ones. */
  namespaces?: NamespacePolicy;
  /** Caps on imports per namespace and per agent (scope.ts); default DEFAULT_IMPORT_CAPS. */
  caps?: ImportCaps;
  /**
   * A user-selected non-Kubernetes Cloud Map service to import under a key (external/,
   * ADR 0014), used only while no cluster of the clusterset exports that key.
   */
  externalExport?(namespace: string, name: string): ClusterExport | undefined;
}

/** A label value: no '/' allowed, so not a domain-prefixed controller name. */
export const SLICE_MANAGED_BY = 'cloudmap-mcs-import-agent';

/** Re-check a key this long after a change we could not observe yet (derived Service IPs). */
const PENDING_RECHECK_MS = 1_000;

/**
 * Re-check an import blocked by someone else's object this often (one GET each time): the
 * Service and slice informers only see our own objects, so the other's removal is not an
 * event here. Documented in docs/import-agent.md ("Name collisions").
 */
export const COLLISION_RECHECK_MS = 10_000;

/** Re-check an import refused by a cap this often, to take a slot freed meanwhile. */
export const CAP_RECHECK_MS = 60_000;

/**
 * One key, `<namespace>/<name>`: reads the Cloud Map snapshot and the informer caches, and
 * converges the ServiceImport, its derived Service and its EndpointSlices (DESIGN.md §3).
 * Level-triggered: it never asks what happened, only what should exist.
 */
export function createImportReconciler(deps: ImportReconcilerDeps): Reconciler<string> {
  const { snapshot } = deps;
  const managedBy = deps.sliceManagedBy ?? SLICE_MANAGED_BY;
  const clock = deps.clock ?? realClock;
  const recent = deps.recent ?? createRecentWrites(clock);
  const refusals =
    deps.refusals ??
    createRefusalLog({
      logger: deps.logger,
      clock,
      message: 'refused cloud map record',
      ...(deps.metrics?.refused === undefined ? {} : { count: deps.metrics.refused }),
    });
  const policy = deps.namespaces ?? defaultNamespacePolicy;
  const admission = createImportAdmission(deps.caps ?? DEFAULT_IMPORT_CAPS, () =>
    deps.sources.managedImportKeys(),
  );
  const collisions = createCollisionReporter({
    ...(deps.events === undefined ? {} : { events: deps.events }),
    ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
  });
  // Every write is remembered so the next reconcile sees it before the informer does.
  const writer: ImportWriter = {
    getLive: (kind, ns, name) => deps.writer.getLive(kind, ns, name),
    applyServiceImport: async (obj) => {
      const stored = await deps.writer.applyServiceImport(obj);
      recent.applied('ServiceImport', stored);
      return stored;
    },
    applyServiceImportStatus: async (ns, name, status) => {
      const stored = await deps.writer.applyServiceImportStatus(ns, name, status);
      recent.applied('ServiceImport', stored);
      return stored;
    },
    applyService: async (obj) => {
      const stored = await deps.writer.applyService(obj);
      recent.applied('Service', stored);
      return stored;
    },
    applyEndpointSlice: async (obj) => {
      const stored = await deps.writer.applyEndpointSlice(obj);
      recent.applied('EndpointSlice', stored);
      return stored;
    },
    delete: async (kind, ns, name, uid) => {
      await deps.writer.delete(kind, ns, name, uid);
      recent.deleted(kind, ns, name);
    },
  };
  /** The informer cache as of our own latest writes. */
  const view = (used: Used) => ({
    serviceImport: (ns: string, name: string) =>
      recent.overlay('ServiceImport', ns, name, deps.sources.serviceImport(ns, name), used),
    service: (ns: string, name: string) =>
      recent.overlay('Service', ns, name, deps.sources.service(ns, name), used),
    endpointSlices: (ns: string, importName: string) =>
      recent.overlaySlices(
        ns,
        deps.sources.endpointSlices(ns, importName),
        (s) => s.metadata.labels?.[LABEL_MCS_SERVICE_NAME] === importName,
        used,
      ),
  });

  const report = (log: Logger, list: readonly Refusal[]): void => {
    for (const r of list) {
      refusals.refused(
        {
          reason: r.reason,
          subject: `${r.service} ${r.cluster ?? '-'} ${r.subject}`,
          fields: { [logFields.clusterId]: r.cluster, detail: r.detail },
        },
        log,
      );
    }
  };

  /** Trusted, decoded exports of one service (refusals logged and counted one by one). */
  const readExports = (log: Logger, namespace: string, name: string): ClusterExport[] => {
    const entry = snapshot.get(namespace, name);
    if (entry === undefined) return [];
    const service = `${namespace}/${name}`;
    const shape = trustInstances(service, entry.instances);
    report(log, shape.refusals);
    const decoded = decodeServiceInstances(namespace, name, shape.instances, {
      clustersetId: deps.trust.clustersetId,
    });
    report(
      log,
      decoded.rejected.map((r) => ({
        reason: 'invalid-instance',
        service,
        subject: r.instanceId,
        detail: r.reason,
      })),
    );
    const out: ClusterExport[] = [];
    const local = { localExport: deps.sources.serviceExportExists(namespace, name) };
    for (const e of decoded.exports) {
      const trusted = trustExport(deps.trust, e, local);
      report(log, trusted.refusals);
      if (trusted.value !== undefined) out.push(trusted.value);
    }
    return out;
  };

  type View = ReturnType<typeof view>;
  /** Slices labelled as ours that also point at our derived Service (the full markers). */
  const ownedSlices = (sources: View, namespace: string, name: string, derivedName: string) =>
    sources
      .endpointSlices(namespace, name)
      .filter(
        (s) =>
          missingMarker('EndpointSlice', s.metadata, { importName: name, derivedName }) ===
          undefined,
      );

  /**
   * What stands under a name we need: our object (from the cache, or read live when the cache
   * has none — the Service and slice caches only hold objects with our labels), someone
   * else's (a collision: never modified), or nothing.
   */
  const observe = async <K extends OwnedKind>(
    kind: K,
    namespace: string,
    objName: string,
    cached: LiveKinds[K] | undefined,
    owner: { importName: string; derivedName: string },
  ): Promise<{ object?: LiveKinds[K]; collision?: NameCollision }> => {
    const found = cached ?? (await writer.getLive(kind, namespace, objName));
    if (found === undefined) return {};
    const collision = collisionOf(kind, found.metadata, owner);
    return collision === undefined ? { object: found } : { collision };
  };

  const deleteAll = async (
    log: Logger,
    sources: View,
    namespace: string,
    name: string,
  ): Promise<void> => {
    // Only what carries all our ownership markers (ownership.ts); anything else stays.
    const derivedName = derivedServiceName(namespace, name);
    const owner = { importName: name, derivedName };
    collisions.clear(log, { namespace, name });
    admission.release(`${namespace}/${name}`);
    for (const slice of ownedSlices(sources, namespace, name, derivedName)) {
      await writer.delete('EndpointSlice', namespace, slice.metadata.name, slice.metadata.uid);
      deps.metrics?.written?.('EndpointSlice', 'delete');
    }
    const derived = sources.service(namespace, derivedName);
    if (derived !== undefined && missingMarker('Service', derived.metadata, owner) === undefined) {
      await writer.delete('Service', namespace, derived.metadata.name, derived.metadata.uid);
      deps.metrics?.written?.('Service', 'delete');
    }
    const si = sources.serviceImport(namespace, name);
    if (si !== undefined && missingMarker('ServiceImport', si.metadata, owner) === undefined) {
      await writer.delete('ServiceImport', namespace, name, si.metadata.uid);
      deps.metrics?.written?.('ServiceImport', 'delete');
      log.info('service import deleted: no cluster exports it any more');
    }
  };

  /** Creates or updates the derived Service, which `observed` (when set) shows to be ours. */
  const ensureDerived = async (
    m: MergedImport,
    derivedName: string,
    owner: { name: string; uid: string },
    sources: View,
    ours: ServiceObject | undefined,
  ): Promise<{ service?: ServiceObject; ipFamilyError?: string }> => {
    let observed = ours;
    if (derivedServiceTypeChanged(m, observed) && observed !== undefined) {
      // Its slices go too (explicitly, not by garbage collection, so the overlay of our
      // recent writes knows they are gone and the plan re-creates them).
      for (const slice of ownedSlices(sources, m.namespace, m.name, derivedName)) {
        await writer.delete('EndpointSlice', m.namespace, slice.metadata.name, slice.metadata.uid);
        deps.metrics?.written?.('EndpointSlice', 'delete');
      }
      await writer.delete('Service', m.namespace, derivedName, observed.metadata.uid);
      deps.metrics?.written?.('Service', 'delete');
      observed = undefined;
    }
    const desired = desiredDerivedService(m, derivedName, owner, observed);
    if (!needsApply(desired, observed)) return observed === undefined ? {} : { service: observed };
    try {
      const applied = await writer.applyService(desired);
      deps.metrics?.written?.('Service', 'apply');
      return { service: applied };
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      if (
        /ipFamilies|ipFamilyPolicy|IPv6|IPv4/.test(text) &&
        /not configured|Invalid|invalid/.test(text)
      ) {
        return {
          ipFamilyError: `the derived Service cannot have IP families ${m.spec.ipFamilies.join(',')}: ${text.slice(0, 300)}`,
        };
      }
      throw error;
    }
  };

  const reconcileKey = async (key: string, log: Logger): Promise<ReconcileResult | void> => {
    const [namespace, name] = splitKey(key);
    if (!deps.sources.namespaceExists(namespace)) return;
    const used: Used = { untilMs: 0 };
    const sources = view(used);
    const badName = serviceNameProblem(name);
    if (badName !== undefined) {
      // Refused once per reconcile of the key (counted; logged at most every 10 minutes),
      // not retried: nothing of ours can exist under such a name.
      refusals.refused(
        { reason: 'invalid-service-name', subject: key, fields: { detail: badName } },
        log,
      );
      return;
    }
    const decision = namespaceDecision(policy, namespace);
    if (!decision.allowed) {
      // Nothing is created here; an import of ours left from before the policy (the
      // namespace's consent withdrawn) is removed like an unexported one.
      if (snapshot.get(namespace, name) !== undefined)
        refusals.refused(
          { reason: 'namespace-denied', subject: key, fields: { detail: decision.why } },
          log,
        );
      await deleteAll(log, sources, namespace, name);
      return;
    }

    // Heartbeat ages are judged as of the last successful read of the heartbeats (never the
    // wall clock across our own outage, issue 11); without a heartbeat service, as of the
    // last successful read of this service.
    const heartbeatService = snapshot.heartbeatService(namespace);
    const entry = snapshot.get(namespace, name);
    const asOfMs = heartbeatService?.confirmedAtMs ?? entry?.confirmedAtMs ?? deps.now();
    const live = applyHeartbeats(
      readExports(log, namespace, name),
      decodeHeartbeats(heartbeatService?.instances ?? [], {
        clustersetId: deps.trust.clustersetId,
      }).heartbeats,
      asOfMs,
      deps.heartbeatTtlMs,
      {
        ...(entry?.clustersFirstSeenMs === undefined
          ? {}
          : { firstSeenMs: entry.clustersFirstSeenMs }),
        ...(heartbeatService?.resumedAtMs === undefined
          ? {}
          : { resumedAtMs: heartbeatService.resumedAtMs }),
      },
    );
    deps.metrics?.staleClusters?.(namespace, name, live.stale.length);
    // MCS exports win; a user's CloudMapServiceImport of the same key reports the conflict.
    const external = live.exports.length === 0 ? deps.externalExport?.(namespace, name) : undefined;
    const merged = mergeExports(external === undefined ? live.exports : [external]);
    if (merged === undefined) {
      await deleteAll(log, sources, namespace, name);
      return;
    }
    const derivedName = derivedServiceName(namespace, name);
    const markers = { importName: name, derivedName };
    const blocked: NameCollision[] = [];
    const cachedSi = sources.serviceImport(namespace, name);
    if (
      cachedSi === undefined ||
      missingMarker('ServiceImport', cachedSi.metadata, markers) !== undefined
    ) {
      const admitted = admission.admit(key);
      if (!admitted.admitted) {
        refusals.refused(
          { reason: 'import-cap', subject: key, fields: { detail: admitted.why } },
          log,
        );
        return { requeueAfterMs: CAP_RECHECK_MS };
      }
    }

    // 1. The ServiceImport (its uid owns the derived Service). A user's ServiceImport of the
    // same name blocks the import; it is not written, not even its status. Its deletion comes
    // through the (unfiltered) ServiceImport informer, so no re-check is needed.
    const siSeen = await observe('ServiceImport', namespace, name, cachedSi, markers);
    if (siSeen.collision !== undefined) {
      admission.release(key);
      collisions.blocked(log, { namespace, name }, [siSeen.collision], undefined);
      return;
    }
    let observedSi = siSeen.object;
    const svcSeen = await observe(
      'Service',
      namespace,
      derivedName,
      sources.service(namespace, derivedName),
      markers,
    );
    if (svcSeen.collision !== undefined) blocked.push(svcSeen.collision);
    let derived = svcSeen.object;
    let desiredSi = desiredServiceImport(
      merged,
      derivedName,
      derivedServiceTypeChanged(merged, derived) ? undefined : derived,
    );
    if (needsApply(desiredSi, observedSi)) {
      observedSi = await writer.applyServiceImport(desiredSi);
      deps.metrics?.written?.('ServiceImport', 'apply');
    }
    const owner = { name, uid: observedSi?.metadata.uid ?? '' };

    // 2. The derived Service; its ClusterIPs become the clusterset IPs. Not when a user's
    // Service has its name: the import stays without IPs and says why.
    const ensured =
      blocked.length > 0 ? {} : await ensureDerived(merged, derivedName, owner, sources, derived);
    derived = ensured.service;
    desiredSi = desiredServiceImport(merged, derivedName, derived);
    if (needsApply(desiredSi, observedSi)) {
      observedSi = await writer.applyServiceImport(desiredSi);
      deps.metrics?.written?.('ServiceImport', 'apply');
    }

    // 3. EndpointSlices, only those that differ; a name taken by someone else's slice is skipped.
    if (derived?.metadata.uid !== undefined) {
      const observedSlices = ownedSlices(sources, namespace, name, derivedName);
      const plan = planSlices({
        namespace,
        importName: name,
        derivedName,
        managedBy,
        sources: merged.sources,
        observed: observedSlices.flatMap((s) => observedSlice(s) ?? []),
        ...(deps.maxEndpointsPerSlice === undefined
          ? {}
          : { maxEndpointsPerSlice: deps.maxEndpointsPerSlice }),
      });
      const svcOwner = { name: derivedName, uid: derived.metadata.uid };
      const known = new Set(observedSlices.map((s) => s.metadata.name));
      for (const slice of plan.apply) {
        if (!known.has(slice.name)) {
          const seen = await observe('EndpointSlice', namespace, slice.name, undefined, markers);
          if (seen.collision !== undefined) {
            blocked.push(seen.collision);
            continue;
          }
        }
        await writer.applyEndpointSlice(sliceObject(namespace, slice, svcOwner));
        deps.metrics?.written?.('EndpointSlice', 'apply');
      }
      for (const sliceName of plan.delete) {
        const uid = observedSlices.find((s) => s.metadata.name === sliceName)?.metadata.uid;
        await writer.delete('EndpointSlice', namespace, sliceName, uid);
        deps.metrics?.written?.('EndpointSlice', 'delete');
      }
    }

    // 4. Status: clusters and Ready, written only when they say something new.
    const ips = clustersetIps(merged, derived);
    const ready = readyCondition({
      merged,
      ips,
      stale: live.stale,
      cloudMapReachable: snapshot.health().reachable,
      ...(ensured.ipFamilyError === undefined ? {} : { ipFamilyError: ensured.ipFamilyError }),
      ...(blocked.length === 0 ? {} : { collisions: describeCollisions(blocked) }),
    });
    const status = desiredStatus(
      observedSi?.status,
      merged.clusters,
      ready,
      new Date(deps.now()).toISOString(),
    );
    if (status !== undefined) {
      await writer.applyServiceImportStatus(namespace, name, status);
      deps.metrics?.written?.('ServiceImport/status', 'apply');
    }

    const waits: number[] = [];
    if (blocked.length > 0) {
      collisions.blocked(log, { namespace, name }, blocked, observedSi?.metadata);
      // Our caches do not see the other object go away (they hold only ours): look again.
      waits.push(COLLISION_RECHECK_MS);
    } else {
      collisions.clear(log, { namespace, name });
    }
    if (
      merged.spec.type === 'ClusterSetIP' &&
      ips.length === 0 &&
      ensured.ipFamilyError === undefined &&
      blocked.length === 0
    ) {
      waits.push(PENDING_RECHECK_MS);
    }
    // Expiry is in data time: look again once data that old can have been read.
    if (live.nextExpiryMs !== undefined)
      waits.push(Math.max(1_000, live.nextExpiryMs - asOfMs + 500));
    // We relied on our own recent writes: look again once the informer must have caught up.
    if (used.untilMs > 0) waits.push(Math.max(100, used.untilMs - clock.now() + 100));
    return waits.length === 0 ? undefined : { requeueAfterMs: Math.min(...waits) };
  };

  return async (key, ctx) => {
    const log =
      ctx?.logger ??
      deps.logger.child({ [logFields.controller]: 'serviceimport', [logFields.key]: key });
    try {
      return await reconcileKey(key, log);
    } catch (error) {
      // The namespace is going away with everything in it; its deletion enqueues the key again.
      if (!(error instanceof NamespaceTerminatingError)) throw error;
      log.debug('write dropped: namespace terminating', { [logFields.error]: error.message });
      return;
    }
  };
}
