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
import { LABEL_MANAGED_BY, MANAGED_BY, type ServiceObject } from './k8s-types.js';
import {
  NamespaceTerminatingError,
  splitKey,
  type ImportSources,
  type ImportWriter,
} from './ports.js';
import { createRecentWrites, type RecentWrites, type Used } from './recent-writes.js';
import { desiredStatus, readyCondition } from './status.js';

export interface ImportMetrics {
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
  /** Wall-clock ms since the epoch (heartbeats carry wall-clock times). */
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
}

/** A label value: no '/' allowed, so not a domain-prefixed controller name. */
export const SLICE_MANAGED_BY = 'cloudmap-mcs-import-agent';

/** Re-check a key this long after a change we could not observe yet (derived Service IPs). */
const PENDING_RECHECK_MS = 1_000;

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
  // Every write is remembered so the next reconcile sees it before the informer does.
  const writer: ImportWriter = {
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
    for (const e of decoded.exports) {
      const trusted = trustExport(deps.trust, e);
      report(log, trusted.refusals);
      if (trusted.value !== undefined) out.push(trusted.value);
    }
    return out;
  };

  type View = ReturnType<typeof view>;
  const deleteAll = async (
    log: Logger,
    sources: View,
    namespace: string,
    name: string,
  ): Promise<void> => {
    // Only what we own: slices and Service carry our managed-by label, the import too.
    for (const slice of sources.endpointSlices(namespace, name)) {
      await writer.delete('EndpointSlice', namespace, slice.metadata.name, slice.metadata.uid);
      deps.metrics?.written?.('EndpointSlice', 'delete');
    }
    const derived = sources.service(namespace, derivedServiceName(namespace, name));
    if (derived !== undefined && derived.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY) {
      await writer.delete('Service', namespace, derived.metadata.name, derived.metadata.uid);
      deps.metrics?.written?.('Service', 'delete');
    }
    const si = sources.serviceImport(namespace, name);
    if (si !== undefined && si.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY) {
      await writer.delete('ServiceImport', namespace, name, si.metadata.uid);
      deps.metrics?.written?.('ServiceImport', 'delete');
      log.info('service import deleted: no cluster exports it any more');
    }
  };

  const ensureDerived = async (
    m: MergedImport,
    derivedName: string,
    owner: { name: string; uid: string },
    sources: View,
  ): Promise<{ service?: ServiceObject; ipFamilyError?: string; recheck: boolean }> => {
    let observed = sources.service(m.namespace, derivedName);
    if (observed !== undefined && observed.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY) {
      throw new Error(`service ${m.namespace}/${derivedName} exists and is not ours`);
    }
    if (derivedServiceTypeChanged(m, observed) && observed !== undefined) {
      // Its slices go too (explicitly, not by garbage collection, so the overlay of our
      // recent writes knows they are gone and the plan re-creates them).
      for (const slice of sources.endpointSlices(m.namespace, m.name)) {
        await writer.delete('EndpointSlice', m.namespace, slice.metadata.name, slice.metadata.uid);
        deps.metrics?.written?.('EndpointSlice', 'delete');
      }
      await writer.delete('Service', m.namespace, derivedName, observed.metadata.uid);
      deps.metrics?.written?.('Service', 'delete');
      observed = undefined;
    }
    const desired = desiredDerivedService(m, derivedName, owner, observed);
    if (!needsApply(desired, observed))
      return observed === undefined ? { recheck: false } : { service: observed, recheck: false };
    try {
      const applied = await writer.applyService(desired);
      deps.metrics?.written?.('Service', 'apply');
      return { service: applied, recheck: false };
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      if (
        /ipFamilies|ipFamilyPolicy|IPv6|IPv4/.test(text) &&
        /not configured|Invalid|invalid/.test(text)
      ) {
        return {
          ipFamilyError: `the derived Service cannot have IP families ${m.spec.ipFamilies.join(',')}: ${text.slice(0, 300)}`,
          recheck: false,
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

    const live = applyHeartbeats(
      readExports(log, namespace, name),
      decodeHeartbeats(snapshot.heartbeats(namespace), { clustersetId: deps.trust.clustersetId })
        .heartbeats,
      deps.now(),
      deps.heartbeatTtlMs,
    );
    deps.metrics?.staleClusters?.(namespace, name, live.stale.length);
    const merged = mergeExports(live.exports);
    if (merged === undefined) {
      await deleteAll(log, sources, namespace, name);
      return;
    }
    const derivedName = derivedServiceName(namespace, name);

    // 1. The ServiceImport (its uid owns the derived Service).
    let observedSi = sources.serviceImport(namespace, name);
    if (observedSi !== undefined && observedSi.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY) {
      log.warn('service import exists and is not ours; leaving it alone');
      return;
    }
    let derived = sources.service(namespace, derivedName);
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

    // 2. The derived Service; its ClusterIPs become the clusterset IPs.
    const ensured = await ensureDerived(merged, derivedName, owner, sources);
    derived = ensured.service;
    desiredSi = desiredServiceImport(merged, derivedName, derived);
    if (needsApply(desiredSi, observedSi)) {
      observedSi = await writer.applyServiceImport(desiredSi);
      deps.metrics?.written?.('ServiceImport', 'apply');
    }

    // 3. EndpointSlices, only those that differ.
    if (derived?.metadata.uid !== undefined) {
      const observedSlices = sources.endpointSlices(namespace, name);
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
      for (const slice of plan.apply) {
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
    if (
      merged.spec.type === 'ClusterSetIP' &&
      ips.length === 0 &&
      ensured.ipFamilyError === undefined
    ) {
      waits.push(PENDING_RECHECK_MS);
    }
    if (live.nextExpiryMs !== undefined)
      waits.push(Math.max(1_000, live.nextExpiryMs - deps.now() + 500));
    // We relied on our own recent writes: look again once the informer must have caught up.
    if (used.untilMs > 0) waits.push(Math.max(100, used.untilMs - clock.now() + 100));
    return waits.length === 0 ? undefined : { requeueAfterMs: Math.min(...waits) };
  };

  return async (key) => {
    const log = deps.logger.child({
      [logFields.controller]: 'serviceimport',
      [logFields.key]: key,
    });
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
