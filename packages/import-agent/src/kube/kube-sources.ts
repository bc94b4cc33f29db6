import { LABEL_MCS_SERVICE_NAME, objectKey } from '@cloudmap-mcs/core';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type EndpointSliceObject,
  type ServiceImportObject,
  type ServiceObject,
} from '../reconcile/k8s-types.js';
import { keyOf } from '../poller/state.js';
import { UNEXPORT_GRACE_MS } from '../reconcile/exports.js';
import type { ImportSources } from '../reconcile/ports.js';
import type { ImportInformers } from './informers.js';

/** Plain JSON copies: client-node hands out class instances with Dates; readers want JSON. */
const plain = <T>(obj: KubernetesObject | undefined): T | undefined =>
  obj === undefined ? undefined : (JSON.parse(JSON.stringify(obj)) as T);

export function createKubeSources(informers: ImportInformers): ImportSources {
  // When each local ServiceExport was deleted, kept for the grace (trust: own-cluster-id).
  const deletedAt = new Map<string, number>();
  informers.serviceExports.on((event, se) => {
    const now = Date.now();
    if (event === 'delete') deletedAt.set(objectKey(se), now);
    else deletedAt.delete(objectKey(se));
    for (const [key, at] of deletedAt) if (now - at >= UNEXPORT_GRACE_MS) deletedAt.delete(key);
  });
  return {
    namespaceExists: (ns) => {
      const obj = informers.namespaces.get(ns);
      return obj !== undefined && obj.metadata?.deletionTimestamp === undefined;
    },
    serviceExportExists: (ns, name) => informers.serviceExports.get(name, ns) !== undefined,
    serviceExportDeletedAtMs: (ns, name) => deletedAt.get(keyOf(ns, name)),
    serviceImport: (ns, name) => plain<ServiceImportObject>(informers.serviceImports.get(name, ns)),
    service: (ns, name) => plain<ServiceObject>(informers.services.get(name, ns)),
    endpointSlices: (ns, importName) =>
      informers.endpointSlices
        .list(ns)
        .filter(
          (s) =>
            s.metadata?.labels?.[LABEL_MCS_SERVICE_NAME] === importName &&
            s.metadata.labels[LABEL_MANAGED_BY] === MANAGED_BY,
        )
        .map((s) => plain<EndpointSliceObject>(s) as EndpointSliceObject),
    managedImportKeys: () =>
      informers.serviceImports
        .list()
        .filter((i) => i.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY)
        .map((i) => `${i.metadata?.namespace ?? ''}/${i.metadata?.name ?? ''}`),
  };
}
