import {
  LABEL_MCS_SERVICE_NAME,
  keyIn,
  objectKey,
  watch,
  type EventSource,
  type Watch,
  type WatchedObject as Obj,
} from '@cloudmap-mcs/core';
import type { ImportController } from './controller.js';

/** What the import agent watches: its caches (kube/informers.ts) and change sources. */
export interface ImportWatched {
  namespaces: EventSource<Obj>;
  serviceImports: EventSource<Obj>;
  serviceExports: EventSource<Obj>;
  /** The Services and EndpointSlices this agent derived (label-selected). */
  services: EventSource<Obj>;
  endpointSlices: EventSource<Obj>;
  /** This cluster's Service CIDRs or node addresses changed (kube/local-addresses.ts). */
  localAddresses: EventSource<unknown>;
  /** A selected non-Kubernetes service changed (external/, ADR 0014): its import's key. */
  external: EventSource<string>;
}

/**
 * Every watch of the import agent and the ServiceImport keys (`namespace/name`) each event
 * maps to (docs/architecture.md#how-each-agent-reconciles). Besides these the controller's
 * Cloud Map poller requeues services whose records, heartbeats or reachability changed.
 */
export function importWatches(
  w: ImportWatched,
  ctl: Pick<ImportController, 'namespaceKeys' | 'allKeys'>,
): Watch<string>[] {
  const owned = (obj: Obj): string[] => {
    const name = obj.metadata?.labels?.[LABEL_MCS_SERVICE_NAME];
    return name === undefined ? [] : [keyIn(obj, name)];
  };
  return [
    // Only appearing or going namespaces matter; updates would cost a slow round each.
    watch('Namespace', w.namespaces, (event, ns) =>
      event === 'update' ? [] : ctl.namespaceKeys(ns.metadata?.name ?? ''),
    ),
    watch('ServiceImport', w.serviceImports, (_e, si) => [objectKey(si)]),
    // A local export appearing or going decides whether records of our own id import.
    watch('ServiceExport', w.serviceExports, (event, se) =>
      event === 'update' ? [] : [objectKey(se)],
    ),
    watch('Service', w.services, (_e, svc) => owned(svc)),
    watch('EndpointSlice', w.endpointSlices, (_e, slice) => owned(slice)),
    // What is refused as an endpoint changed: every import.
    watch('local addresses', w.localAddresses, () => ctl.allKeys()),
    watch('CloudMapServiceImport', w.external, (_e, key) => [key]),
  ];
}
