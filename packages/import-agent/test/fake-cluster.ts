import { LABEL_MCS_SERVICE_NAME } from '@cloudmap-mcs/core';
import {
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type EndpointSliceObject,
  type ServiceImportObject,
  type ServiceImportStatus,
  type ServiceObject,
} from '../src/reconcile/k8s-types.js';
import type { ImportSources, ImportWriter } from '../src/reconcile/ports.js';

/**
 * An in-memory cluster for component tests: what server-side apply would store (our fields
 * replace our previous ones), ClusterIP allocation per IP family, uids, and write counters.
 * Switches fail the next N writes of a kind.
 */
export interface FakeCluster extends ImportSources, ImportWriter {
  namespaces: Set<string>;
  imports: Map<string, ServiceImportObject>;
  services: Map<string, ServiceObject>;
  slices: Map<string, EndpointSliceObject>;
  /** Keys (`ns/name`) of this cluster's own ServiceExports. */
  exports: Set<string>;
  /** When a local ServiceExport was deleted (wall-clock ms), by key. */
  exportsDeletedAt: Map<string, number>;
  writes: number;
  writeLog: string[];
  /** GETs that bypassed the caches (getLive). */
  liveReads: number;
  /** The next `n` writes throw: an Error with `message`, or what `error` makes. */
  failNextWrites(n: number, message?: string | (() => Error)): void;
  /** Families the cluster supports (IPv6 missing → SingleStack IPv6 fails). */
  families: string[];
  /** Reads come from a copy taken now until `thaw` (an informer cache lagging behind). */
  freezeReads(): void;
  thaw(): void;
}

export function createFakeCluster(namespaces: string[] = ['shop']): FakeCluster {
  let uid = 0;
  let ip = 0;
  let rv = 0;
  let failures = 0;
  let failMessage: string | (() => Error) = 'injected';
  const key = (ns: string, name: string): string => `${ns}/${name}`;
  const clone = <T>(v: T): T => structuredClone(v);
  let frozen:
    | {
        imports: Map<string, ServiceImportObject>;
        services: Map<string, ServiceObject>;
        slices: Map<string, EndpointSliceObject>;
      }
    | undefined;
  const reads = () => frozen ?? cluster;
  const write = (what: string): void => {
    if (failures > 0) {
      failures--;
      throw typeof failMessage === 'string' ? new Error(failMessage) : failMessage();
    }
    cluster.writes++;
    cluster.writeLog.push(what);
  };
  const cluster: FakeCluster = {
    namespaces: new Set(namespaces),
    imports: new Map(),
    services: new Map(),
    slices: new Map(),
    exports: new Set(),
    exportsDeletedAt: new Map(),
    writes: 0,
    writeLog: [],
    liveReads: 0,
    families: ['IPv4', 'IPv6'],
    failNextWrites(n, message = 'injected') {
      failures = n;
      failMessage = message;
    },
    namespaceExists: (ns) => cluster.namespaces.has(ns),
    serviceExportExists: (ns, name) => cluster.exports.has(key(ns, name)),
    serviceExportDeletedAtMs: (ns, name) => cluster.exportsDeletedAt.get(key(ns, name)),
    freezeReads() {
      frozen = {
        imports: clone(cluster.imports),
        services: clone(cluster.services),
        slices: clone(cluster.slices),
      };
    },
    thaw() {
      frozen = undefined;
    },
    serviceImport: (ns, name) => clone(reads().imports.get(key(ns, name))),
    // Like the real informer, filtered by our managed-by label: a user's Service is not seen.
    service: (ns, name) => {
      const svc = reads().services.get(key(ns, name));
      return svc?.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY ? clone(svc) : undefined;
    },
    async getLive(kind, ns, name) {
      cluster.liveReads++;
      const store =
        kind === 'ServiceImport'
          ? cluster.imports
          : kind === 'Service'
            ? cluster.services
            : cluster.slices;
      return clone(store.get(key(ns, name))) as never;
    },
    endpointSlices: (ns, importName) =>
      [...reads().slices.values()]
        .filter(
          (s) =>
            s.metadata.namespace === ns &&
            s.metadata.labels?.[LABEL_MCS_SERVICE_NAME] === importName &&
            s.metadata.labels[LABEL_MANAGED_BY] === MANAGED_BY,
        )
        .map(clone),
    managedImportKeys: () =>
      [...reads().imports.values()]
        .filter((i) => i.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY)
        .map((i) => key(i.metadata.namespace, i.metadata.name)),
    async applyServiceImport(obj) {
      // As the API server: metadata.name must be a DNS subdomain.
      if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(obj.metadata.name))
        throw new Error(
          `ServiceImport "${obj.metadata.name}" is invalid: metadata.name: Invalid value`,
        );
      write(`apply ServiceImport ${obj.metadata.name}`);
      const k = key(obj.metadata.namespace, obj.metadata.name);
      const old = cluster.imports.get(k);
      const stored: ServiceImportObject = {
        ...clone(obj),
        metadata: {
          ...clone(obj.metadata),
          uid: old?.metadata.uid ?? `uid-${String(++uid)}`,
          resourceVersion: String(++rv),
        },
        ...(old?.status === undefined ? {} : { status: old.status }),
      };
      cluster.imports.set(k, stored);
      return clone(stored);
    },
    async applyServiceImportStatus(ns, name, status: ServiceImportStatus) {
      write(`apply ServiceImport/status ${name}`);
      const old = cluster.imports.get(key(ns, name));
      if (old === undefined) throw new Error('not found');
      old.status = clone(status);
      old.metadata.resourceVersion = String(++rv);
      return clone(old);
    },
    async applyService(obj) {
      // As kube-apiserver v1.36 answers (checked on the harness's IP_FAMILY clusters): every
      // listed family must be configured, whatever the policy (PreferDualStack [IPv6, IPv4]
      // in an IPv4-only cluster is refused too); unlisted, the cluster's families are given.
      const families =
        obj.spec.ipFamilies ??
        (obj.spec.ipFamilyPolicy === 'SingleStack' || obj.spec.ipFamilyPolicy === undefined
          ? cluster.families.slice(0, 1)
          : cluster.families);
      const unsupported = families.findIndex((f) => !cluster.families.includes(f));
      if (unsupported >= 0) {
        throw new Error(
          `Service "x" is invalid: spec.ipFamilies[${String(unsupported)}]: Invalid value: "${families[unsupported] ?? ''}": not configured on this cluster`,
        );
      }
      if (obj.spec.ipFamilyPolicy === 'RequireDualStack' && cluster.families.length < 2) {
        throw new Error(
          'Service "x" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
        );
      }
      write(`apply Service ${obj.metadata.name}`);
      const k = key(obj.metadata.namespace, obj.metadata.name);
      const old = cluster.services.get(k);
      if (
        old !== undefined &&
        (old.spec.clusterIP === 'None') !== (obj.spec.clusterIP === 'None')
      ) {
        throw new Error('spec.clusterIP: Invalid value: field is immutable');
      }
      const allocated = families.filter((f) => cluster.families.includes(f));
      const clusterIPs =
        old?.spec.clusterIPs ??
        (obj.spec.clusterIP === 'None'
          ? ['None']
          : allocated.map((f) =>
              f === 'IPv4' ? `10.96.0.${String(++ip)}` : `fd00:96::${String(++ip)}`,
            ));
      const stored: ServiceObject = {
        ...clone(obj),
        metadata: {
          ...clone(obj.metadata),
          uid: old?.metadata.uid ?? `uid-${String(++uid)}`,
          resourceVersion: String(++rv),
        },
        spec: {
          ...clone(obj.spec),
          clusterIP: clusterIPs[0] ?? '',
          clusterIPs,
          ipFamilies: allocated,
        },
      };
      cluster.services.set(k, stored);
      return clone(stored);
    },
    async applyEndpointSlice(obj) {
      write(`apply EndpointSlice ${obj.metadata.name}`);
      const k = key(obj.metadata.namespace, obj.metadata.name);
      const stored: EndpointSliceObject = {
        ...clone(obj),
        metadata: {
          ...clone(obj.metadata),
          uid: cluster.slices.get(k)?.metadata.uid ?? `uid-${String(++uid)}`,
          resourceVersion: String(++rv),
        },
      };
      cluster.slices.set(k, stored);
      return clone(stored);
    },
    async delete(kind, ns, name) {
      write(`delete ${kind} ${name}`);
      const k = key(ns, name);
      if (kind === 'ServiceImport') {
        cluster.imports.delete(k);
        // Garbage collection through the owner references.
        for (const [sk, s] of cluster.services) {
          if (
            s.metadata.ownerReferences?.some(
              (o) => o.kind === 'ServiceImport' && o.name === name,
            ) &&
            s.metadata.namespace === ns
          )
            cluster.services.delete(sk);
        }
      } else if (kind === 'Service') {
        cluster.services.delete(k);
        for (const [sk, s] of cluster.slices) {
          if (
            s.metadata.ownerReferences?.some((o) => o.kind === 'Service' && o.name === name) &&
            s.metadata.namespace === ns
          )
            cluster.slices.delete(sk);
        }
      } else {
        cluster.slices.delete(k);
      }
    },
  };
  return cluster;
}
