import {
  LABEL_MCS_SERVICE_NAME,
  ServiceImportApi,
  shortHash,
  sortedKeys,
  type IPFamily,
  type MergedImport,
  type SliceState,
} from '@cloudmap-mcs/core';
import {
  ANNOTATION_APPLIED,
  ANNOTATION_DERIVED_SERVICE,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type EndpointSliceObject,
  type ServiceImportObject,
  type ServiceObject,
} from './k8s-types.js';

/**
 * Pure builders of the objects the import agent applies, and the comparisons that decide
 * whether an apply is needed at all (docs/contributing.md#idempotence). Never mutate their inputs.
 */

/** A short digest of an object's content (key order does not matter). */
export const contentHash = (value: unknown): string =>
  shortHash(JSON.stringify(sortedKeys(value)), 16);

/** Every key of `want` is in `have` with an equal value (arrays element-wise, same length). */
function subsetEqual(want: unknown, have: unknown): boolean {
  if (Array.isArray(want)) {
    return (
      Array.isArray(have) &&
      have.length === want.length &&
      want.every((w, i) => subsetEqual(w, have[i]))
    );
  }
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object') return false;
    return Object.entries(want).every(
      ([k, v]) => v === undefined || subsetEqual(v, (have as Record<string, unknown>)[k]),
    );
  }
  return want === have;
}

/** Stamps the applied-content hash into the object's annotations (a copy). */
function stamped<T extends { metadata: { annotations?: Record<string, string> } }>(obj: T): T {
  const hash = contentHash(obj);
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [ANNOTATION_APPLIED]: hash },
    },
  };
}

/**
 * Whether `desired` differs from what is stored: the hash of what we last applied, plus the
 * spec itself (someone else may have edited it since).
 */
export function needsApply(
  desired: { metadata: { annotations?: Record<string, string> }; spec: unknown },
  observed: { metadata: { annotations?: Record<string, string> }; spec: unknown } | undefined,
): boolean {
  if (observed === undefined) return true;
  const want = desired.metadata.annotations?.[ANNOTATION_APPLIED];
  return (
    want !== observed.metadata.annotations?.[ANNOTATION_APPLIED] ||
    !subsetEqual(desired.spec, observed.spec)
  );
}

/** `{ sessionAffinityConfig }` when ClientIP affinity has a timeout, else nothing. */
const affinityConfig = (
  m: MergedImport,
): { sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } } } =>
  m.spec.sessionAffinity === 'ClientIP' && m.spec.sessionAffinityTimeoutSeconds !== undefined
    ? {
        sessionAffinityConfig: {
          clientIP: { timeoutSeconds: m.spec.sessionAffinityTimeoutSeconds },
        },
      }
    : {};

/** IPs of a ClusterSetIP import: the derived Service's ClusterIPs, in its ipFamilies order. */
export function clustersetIps(m: MergedImport, derived: ServiceObject | undefined): string[] {
  if (m.spec.type === 'Headless' || derived === undefined) return [];
  return (derived.spec.clusterIPs ?? []).filter((ip) => ip !== '' && ip !== 'None').slice(0, 2);
}

export function desiredServiceImport(
  m: MergedImport,
  derivedName: string,
  derived: ServiceObject | undefined,
): ServiceImportObject {
  const ips = clustersetIps(m, derived);
  const families =
    m.spec.type === 'ClusterSetIP' && derived?.spec.ipFamilies !== undefined && ips.length > 0
      ? derived.spec.ipFamilies
      : m.spec.ipFamilies;
  const obj: ServiceImportObject = {
    apiVersion: ServiceImportApi.apiVersion,
    kind: 'ServiceImport',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      // Exported labels/annotations of the oldest export; ours last so they cannot be spoofed.
      labels: { ...m.labels, [LABEL_MANAGED_BY]: MANAGED_BY },
      annotations: {
        ...m.annotations,
        [ANNOTATION_DERIVED_SERVICE]: derivedName,
      },
    },
    spec: {
      type: m.spec.type,
      ports: m.spec.ports.map((p) => ({
        ...(p.name === '' ? {} : { name: p.name }),
        protocol: p.protocol,
        port: p.port,
        ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
      })),
      ...(ips.length > 0 ? { ips } : {}),
      ipFamilies: [...families].slice(0, ips.length > 0 ? ips.length : 2),
      sessionAffinity: m.spec.sessionAffinity,
      ...affinityConfig(m),
      internalTrafficPolicy: m.spec.internalTrafficPolicy,
      trafficDistribution: m.spec.trafficDistribution,
    },
  };
  return stamped(obj);
}

/** Whether the stored derived Service must be replaced (clusterIP None ↔ allocated is immutable). */
export function derivedServiceTypeChanged(
  m: MergedImport,
  observed: ServiceObject | undefined,
): boolean {
  if (observed === undefined) return false;
  return (observed.spec.clusterIP === 'None') !== (m.spec.type === 'Headless');
}

export function desiredDerivedService(
  m: MergedImport,
  derivedName: string,
  owner: { name: string; uid: string },
  observed: ServiceObject | undefined,
  /** The exported families this cluster serves (families.ts); default: all exported. */
  serve: readonly IPFamily[] = m.spec.ipFamilies,
): ServiceObject {
  const headless = m.spec.type === 'Headless';
  // IP families are chosen once, at creation: changing them later would change (or fail to
  // change) the clusterset IP, which must stay stable for the life of the import.
  const families =
    observed?.spec.ipFamilies !== undefined
      ? {
          ipFamilies: observed.spec.ipFamilies,
          ipFamilyPolicy: observed.spec.ipFamilyPolicy ?? 'SingleStack',
        }
      : serve.length === 0
        ? { ipFamilyPolicy: 'PreferDualStack' }
        : {
            ipFamilies: [...serve],
            ipFamilyPolicy: serve.length > 1 ? 'PreferDualStack' : 'SingleStack',
          };
  const obj: ServiceObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: derivedName,
      namespace: m.namespace,
      labels: { [LABEL_MCS_SERVICE_NAME]: m.name, [LABEL_MANAGED_BY]: MANAGED_BY },
      ownerReferences: [controllerRef(ServiceImportApi.apiVersion, 'ServiceImport', owner)],
    },
    spec: {
      type: 'ClusterIP',
      ...(headless ? { clusterIP: 'None' } : {}),
      ports: m.spec.ports.map((p) => ({
        ...(p.serviceName === '' ? {} : { name: p.serviceName }),
        protocol: p.protocol,
        port: p.port,
        targetPort: p.port,
        ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
      })),
      ...families,
      sessionAffinity: headless ? 'None' : m.spec.sessionAffinity,
      ...(headless ? {} : affinityConfig(m)),
      internalTrafficPolicy: m.spec.internalTrafficPolicy ?? 'Cluster',
      trafficDistribution: m.spec.trafficDistribution,
    },
  };
  return stamped(obj);
}

/** What we create is owned by (and deleted with) the object it is derived from. */
function controllerRef(apiVersion: string, kind: string, owner: { name: string; uid: string }) {
  return {
    apiVersion,
    kind,
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: false,
  };
}

export function sliceObject(
  namespace: string,
  slice: SliceState,
  owner: { name: string; uid: string },
): EndpointSliceObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: slice.name,
      namespace,
      labels: { ...slice.labels, [LABEL_MANAGED_BY]: MANAGED_BY },
      ownerReferences: [controllerRef('v1', 'Service', owner)],
    },
    addressType: slice.addressType,
    endpoints: slice.endpoints.map((e) => ({
      addresses: [e.address],
      conditions: { ...e.conditions },
      ...(e.hostname === undefined ? {} : { hostname: e.hostname }),
      ...(e.nodeName === undefined ? {} : { nodeName: e.nodeName }),
      ...(e.zone === undefined ? {} : { zone: e.zone }),
    })),
    ports: slice.ports.map((p) => ({
      name: p.name,
      protocol: p.protocol,
      port: p.port,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
  };
}

/** The planner's view of a stored slice. */
export function observedSlice(obj: EndpointSliceObject): SliceState | undefined {
  if (obj.addressType === 'FQDN') return undefined;
  return {
    name: obj.metadata.name,
    labels: { ...obj.metadata.labels },
    addressType: obj.addressType,
    ports: (obj.ports ?? []).map((p) => ({
      name: p.name ?? '',
      protocol: (p.protocol ?? 'TCP') as 'TCP',
      port: p.port ?? 0,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
    endpoints: obj.endpoints.map((e) => ({
      address: e.addresses[0] ?? '',
      conditions: {
        ready: e.conditions?.ready ?? true,
        serving: e.conditions?.serving ?? e.conditions?.ready ?? true,
        terminating: e.conditions?.terminating ?? false,
      },
      ...(e.hostname === undefined ? {} : { hostname: e.hostname }),
      ...(e.nodeName === undefined ? {} : { nodeName: e.nodeName }),
      ...(e.zone === undefined ? {} : { zone: e.zone }),
    })),
  };
}
