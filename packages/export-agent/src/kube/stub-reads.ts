import type { CoreV1Api, DiscoveryV1Api, KubernetesObject } from '@kubernetes/client-node';
import {
  LABEL_SERVICE_NAME,
  splitKey,
  type Clock,
  type EventHub,
  type Logger,
  type WatchEvent,
} from '@cloudmap-mcs/core';
import { isMetadataStub, stripUnread, type SupervisedInformer } from '@cloudmap-mcs/core/runtime';
import type { EndpointSliceObject, ServiceObject } from '../k8s-types.js';

/** An exported Service and its EndpointSlices read by GET/LIST while the caches hold stubs. */
interface Fetched {
  service: ServiceObject | undefined;
  slices: Map<string, EndpointSliceObject>;
}

/**
 * Exports that name objects the caches hold only as stubs (sources.ts): those are read once
 * (GET the Service, LIST its slices) and kept aside until the caches hold them in full.
 */
export interface StubReads {
  readonly core: CoreV1Api;
  readonly discovery: DiscoveryV1Api;
  readonly services: SupervisedInformer<KubernetesObject>;
  readonly slices: SupervisedInformer<KubernetesObject>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** A read ended (or failed a second ago): the export's key (watches.ts). */
  readonly reads: EventHub<string>;
  readonly fetched: Map<string, Fetched>;
  readonly inFlight: Set<string>;
}

const slicesOf = (r: StubReads, ns: string, svc: string) =>
  (r.slices.list(ns) as readonly EndpointSliceObject[]).filter(
    (s) => s.metadata.labels?.[LABEL_SERVICE_NAME] === svc,
  );

/** The Service and slices of an export, the cached ones first; undefined while unknown. */
export function current(
  r: StubReads,
  key: string,
): { service: ServiceObject | undefined; slices: EndpointSliceObject[] } | undefined {
  const [ns, name] = splitKey(key);
  const f = r.fetched.get(key);
  const cachedService = r.services.get(name, ns) as ServiceObject | undefined;
  let service = cachedService;
  if (isMetadataStub(cachedService)) {
    if (f === undefined) return undefined;
    service = f.service;
  }
  const out: EndpointSliceObject[] = [];
  let allCachedInFull = !isMetadataStub(cachedService);
  for (const s of slicesOf(r, ns, name)) {
    if (!isMetadataStub(s)) out.push(s);
    else {
      allCachedInFull = false;
      const full = f?.slices.get(s.metadata.name);
      if (full === undefined) return undefined;
      out.push(full);
    }
  }
  // The caches hold everything in full again: the copies aside are no longer needed. Judged
  // on the caches, not on `out` (which holds the copies): dropping them while a slice is still
  // a stub made the next read "unknown", and the reconciler wrote "Service not found".
  if (f !== undefined && allCachedInFull) r.fetched.delete(key);
  return { service, slices: out };
}

async function fetchExported(r: StubReads, key: string): Promise<void> {
  const [namespace, name] = splitKey(key);
  let service: ServiceObject | undefined;
  try {
    service = stripUnread(
      (await r.core.readNamespacedService({ name, namespace })) as KubernetesObject,
    ) as unknown as ServiceObject;
  } catch (error) {
    if ((error as { code?: number }).code !== 404) throw error;
  }
  const list = await r.discovery.listNamespacedEndpointSlice({
    namespace,
    labelSelector: `${LABEL_SERVICE_NAME}=${name}`,
  });
  const sliceMap = new Map<string, EndpointSliceObject>();
  for (const s of list.items)
    sliceMap.set(s.metadata?.name ?? '', stripUnread(s) as unknown as EndpointSliceObject);
  r.fetched.set(key, { service, slices: sliceMap });
}

/**
 * True while an export's objects are known only as stubs; starts (once) reading them.
 * A failed read is retried after a second; the reconciler requeues meanwhile.
 */
export function loading(r: StubReads, key: string): boolean {
  if (!r.services.hasSynced() || !r.slices.hasSynced()) return false;
  if (current(r, key) !== undefined) return false;
  if (!r.inFlight.has(key)) {
    r.inFlight.add(key);
    const done = () => {
      r.inFlight.delete(key);
      r.reads.emit('update', key);
    };
    fetchExported(r, key).then(done, (error: unknown) => {
      r.logger.warn('reading an exported service failed; retrying', { key, error });
      r.clock.setTimer(done, 1_000);
    });
  }
  return true;
}

/**
 * Whether a ServiceExport event is reconciled now: not while the objects of a new export are
 * read (the read's end enqueues it). A deleted export's copies aside are dropped.
 */
export function exportEventReady(r: StubReads, event: WatchEvent, key: string): boolean {
  if (event !== 'delete') return !loading(r, key);
  r.fetched.delete(key);
  return true;
}
