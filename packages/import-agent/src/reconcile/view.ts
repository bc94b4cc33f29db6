import { LABEL_MCS_SERVICE_NAME } from '@cloudmap-mcs/core';
import type { ObjectMeta } from './k8s-types.js';
import { collisionOf, isOurs, type NameCollision, type OwnedKind } from './ownership.js';
import type { ImportSources, ImportWriter, LiveKinds } from './ports.js';
import type { RecentWrites, Used } from './recent-writes.js';

/**
 * How a reconcile reads and writes Kubernetes: through the informer caches as of our own
 * latest writes (recent-writes.ts), and a writer that remembers and counts every write.
 */

export interface WriteMetrics {
  written?(kind: string, verb: 'apply' | 'delete'): void;
}

/** `base` with every write remembered (the next reconcile sees it before the informer does) and counted. */
export function createRecordingWriter(
  base: ImportWriter,
  recent: RecentWrites,
  metrics: WriteMetrics | undefined,
): ImportWriter {
  const applied = <T extends { metadata: ObjectMeta }>(
    stored: T,
    kind: OwnedKind,
    metric: string = kind,
  ) => {
    recent.applied(kind, stored);
    metrics?.written?.(metric, 'apply');
    return stored;
  };
  return {
    getLive: (kind, ns, name) => base.getLive(kind, ns, name),
    applyServiceImport: async (obj) => applied(await base.applyServiceImport(obj), 'ServiceImport'),
    applyServiceImportStatus: async (ns, name, status) =>
      applied(
        await base.applyServiceImportStatus(ns, name, status),
        'ServiceImport',
        'ServiceImport/status',
      ),
    applyService: async (obj) => applied(await base.applyService(obj), 'Service'),
    applyEndpointSlice: async (obj) => applied(await base.applyEndpointSlice(obj), 'EndpointSlice'),
    delete: async (kind, ns, name, uid) => {
      await base.delete(kind, ns, name, uid);
      recent.deleted(kind, ns, name);
      metrics?.written?.(kind, 'delete');
    },
  };
}

/** The informer caches as of our own latest writes; `used` records that an overlay was relied on. */
export function cacheView(sources: ImportSources, recent: RecentWrites, used: Used) {
  return {
    serviceImport: (ns: string, name: string) =>
      recent.overlay('ServiceImport', ns, name, sources.serviceImport(ns, name), used),
    service: (ns: string, name: string) =>
      recent.overlay('Service', ns, name, sources.service(ns, name), used),
    endpointSlices: (ns: string, importName: string) =>
      recent.overlaySlices(
        ns,
        sources.endpointSlices(ns, importName),
        (s) => s.metadata.labels?.[LABEL_MCS_SERVICE_NAME] === importName,
        used,
      ),
  };
}

export type View = ReturnType<typeof cacheView>;

/** The ownership markers of one import's objects. */
export interface Markers {
  importName: string;
  derivedName: string;
  /** The derived Service was adopted (ownership.ts `derivedNameOf`). */
  adopted?: boolean;
}

/** Slices labelled as ours that also point at our derived Service (the full markers). */
export function ownedSlices(view: View, namespace: string, markers: Markers) {
  return view
    .endpointSlices(namespace, markers.importName)
    .filter((s) => isOurs('EndpointSlice', s, markers));
}

/**
 * What stands under a name we need: our object (from the cache, or read live when the cache
 * has none — the Service and slice caches only hold objects with our labels), someone
 * else's (a collision: never modified), or nothing.
 */
export async function observe<K extends OwnedKind>(
  writer: ImportWriter,
  kind: K,
  namespace: string,
  objName: string,
  cached: LiveKinds[K] | undefined,
  markers: Markers,
): Promise<{ object?: LiveKinds[K]; collision?: NameCollision }> {
  const found = cached ?? (await writer.getLive(kind, namespace, objName));
  if (found === undefined) return {};
  const collision = collisionOf(kind, found.metadata, markers);
  return collision === undefined ? { object: found } : { collision };
}
