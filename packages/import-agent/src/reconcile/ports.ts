import type {
  EndpointSliceObject,
  ServiceImportObject,
  ServiceImportStatus,
  ServiceObject,
} from './k8s-types.js';

export interface LiveKinds {
  ServiceImport: ServiceImportObject;
  Service: ServiceObject;
  EndpointSlice: EndpointSliceObject;
}

/** Read side: informer caches, as the reconciler sees them. */
export interface ImportSources {
  namespaceExists(namespace: string): boolean;
  serviceImport(namespace: string, name: string): ServiceImportObject | undefined;
  service(namespace: string, name: string): ServiceObject | undefined;
  /** Slices labelled multicluster.kubernetes.io/service-name=<importName> and managed by us. */
  endpointSlices(namespace: string, importName: string): EndpointSliceObject[];
  /**
   * Whether this cluster has a ServiceExport of `namespace/name`: records claiming this
   * cluster's id are only its export agent's (and imported) when it does.
   */
  serviceExportExists(namespace: string, name: string): boolean;
  /** Wall-clock ms when this cluster's ServiceExport of `namespace/name` was deleted, if lately. */
  serviceExportDeletedAtMs?(namespace: string, name: string): number | undefined;
  /** Keys (`ns/name`) of every ServiceImport we manage (startup replay). */
  managedImportKeys(): string[];
}

/**
 * Write side: server-side apply with our field manager, deletes with preconditions. Applies
 * return the object as stored (uid, clusterIPs).
 */
export interface ImportWriter {
  applyServiceImport(obj: ServiceImportObject): Promise<ServiceImportObject>;
  applyServiceImportStatus(
    namespace: string,
    name: string,
    status: ServiceImportStatus,
  ): Promise<ServiceImportObject>;
  applyService(obj: ServiceObject): Promise<ServiceObject>;
  applyEndpointSlice(obj: EndpointSliceObject): Promise<EndpointSliceObject>;
  /**
   * The object as stored now, straight from the API server (not an informer cache, which only
   * holds objects with our labels), or undefined when there is none. Used before creating an
   * object, to find someone else's under the same name.
   */
  getLive<K extends keyof LiveKinds>(
    kind: K,
    namespace: string,
    name: string,
  ): Promise<LiveKinds[K] | undefined>;
  /** Deletes; a missing object is success. `uid` is a precondition when given. */
  delete(
    kind: 'ServiceImport' | 'Service' | 'EndpointSlice',
    namespace: string,
    name: string,
    uid?: string,
  ): Promise<void>;
}

/**
 * A write the API server refused because the namespace is being deleted (the
 * NamespaceLifecycle admission plugin): a race with the deletion, not a failure. The writer
 * raises it so the reconciler can drop the key quietly; the namespace's removal re-enqueues.
 */
export class NamespaceTerminatingError extends Error {
  override readonly name = 'NamespaceTerminatingError';
}
