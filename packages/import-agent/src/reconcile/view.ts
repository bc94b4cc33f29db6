import { LABEL_MCS_SERVICE_NAME } from '@cloudmap-mcs/core';
import { collisionOf, missingMarker, type NameCollision, type OwnedKind } from './ownership.js';
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
  const count = (kind: string, verb: 'apply' | 'delete'): void => metrics?.written?.(kind, verb);
  return {
    getLive: (kind, ns, name) => base.getLive(kind, ns, name),
    applyServiceImport: async (obj) => {
      const stored = await base.applyServiceImport(obj);
      recent.applied('ServiceImport', stored);
      count('ServiceImport', 'apply');
      return stored;
    },
    applyServiceImportStatus: async (ns, name, status) => {
      const stored = await base.applyServiceImportStatus(ns, name, status);
      recent.applied('ServiceImport', stored);
      count('ServiceImport/status', 'apply');
      return stored;
    },
    applyService: async (obj) => {
      const stored = await base.applyService(obj);
      recent.applied('Service', stored);
      count('Service', 'apply');
      return stored;
    },
    applyEndpointSlice: async (obj) => {
      const stored = await base.applyEndpointSlice(obj);
      recent.applied('EndpointSlice', stored);
      count('EndpointSlice', 'apply');
      return stored;
    },
    delete: async (kind, ns, name, uid) => {
      await base.delete(kind, ns, name, uid);
      recent.deleted(kind, ns, name);
      count(kind, 'delete');
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
    .filter((s) => missingMarker('EndpointSlice', s.metadata, markers) === undefined);
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
