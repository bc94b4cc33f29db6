import {
  LABEL_SERVICE_NAME,
  keyIn,
  objectKey,
  watch,
  type EndpointSliceObject,
  type EventSource,
  type Watch,
  type WatchedObject as Obj,
  type WatchEvent,
} from '@cloudmap-mcs/core';

/** What the export agent watches: the caches of kube/sources.ts and their event sources. */
export interface ExportWatched {
  serviceExports: EventSource<Obj>;
  services: EventSource<Obj>;
  endpointSlices: EventSource<Obj>;
  /** Pods first seen, relabelled or deleted (other pod updates never arrive: pod-labels.ts). */
  pods: EventSource<Obj>;
  /** The ClusterProperty identity changed (or became usable). */
  identity: EventSource<unknown>;
  /** An export's Service and slices, cached only as stubs, were read in full: its key. */
  reads: EventSource<string>;
  /** Whether the Service `namespace/name` is exported (a ServiceExport is cached). */
  exported(namespace: string, name: string): boolean;
  /** False while the export's objects are read in full (stub-reads.ts). */
  exportEventReady(event: WatchEvent, key: string): boolean;
  /** The namespace's EndpointSlices cached in full (those of exported Services). */
  slicesIn(namespace: string): readonly EndpointSliceObject[];
  serviceExportKeys(): string[];
}

/**
 * Every watch of the export agent and the ServiceExport keys (`namespace/name`) each event
 * maps to (docs/architecture.md#how-each-agent-reconciles). Besides these the controller
 * requeues a key when a Cloud Map operation of it ends or another cluster changed it.
 */
export function exportWatches(w: ExportWatched): Watch<string>[] {
  const ifExported = (obj: Obj, name: string | undefined): string[] => {
    const key = keyIn(obj, name);
    return w.exported(obj.metadata?.namespace as string, name as string) ? [key] : [];
  };
  return [
    watch('ServiceExport', w.serviceExports, (event, se) => {
      const key = objectKey(se);
      return w.exportEventReady(event, key) ? [key] : [];
    }),
    watch('Service', w.services, (_e, svc) => ifExported(svc, svc.metadata?.name)),
    watch('EndpointSlice', w.endpointSlices, (_e, slice) =>
      ifExported(slice, slice.metadata?.labels?.[LABEL_SERVICE_NAME]),
    ),
    watch('Pod', w.pods, (_e, pod) => exportsBacked(w, pod)),
    // The identity is part of every record.
    watch('ClusterProperty', w.identity, () => w.serviceExportKeys()),
    watch('Service read', w.reads, (_e, key) => [key]),
  ];
}

/** The exports whose EndpointSlices point at the pod. */
function exportsBacked(w: ExportWatched, pod: Obj): Set<string> {
  const namespace = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  const keys = new Set<string>();
  for (const slice of w.slicesIn(namespace)) {
    const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (svc === undefined || keys.has(`${namespace}/${svc}`)) continue;
    if (!w.exported(namespace, svc)) continue;
    const backs = (slice.endpoints ?? []).some(
      (e) => e.targetRef?.kind === 'Pod' && e.targetRef.name === name,
    );
    if (backs) keys.add(`${namespace}/${svc}`);
  }
  return keys;
}
