/**
 * The Kubernetes objects the import agent reads and writes, as JSON (only the fields used).
 * The adapter converts from and to the API; the reconciler and the pure builders need no
 * @kubernetes/client-node types. Metadata, conditions and the Service and EndpointSlice shapes
 * are core's (one vocabulary for both agents and the CLI); here they are narrowed to what the
 * import agent writes.
 */
import type {
  Condition,
  EndpointSliceObject as KubeEndpointSliceObject,
  KubeServicePort,
  KubeServiceSpec,
  KubeSliceEndpoint,
  ObjectMeta,
  ServiceImportApi,
  ServiceObject as KubeServiceObject,
} from '@cloudmap-mcs/core';

export type { ObjectMeta, OwnerReference } from '@cloudmap-mcs/core';

interface ServiceImportPort {
  name?: string;
  protocol: string;
  port: number;
  appProtocol?: string;
}

interface ServiceImportSpec {
  type: 'ClusterSetIP' | 'Headless';
  ports: ServiceImportPort[];
  ips?: string[];
  ipFamilies?: string[];
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
  internalTrafficPolicy?: string | undefined;
  trafficDistribution?: string | undefined;
}

export interface ServiceImportStatus {
  clusters?: { cluster: string }[];
  conditions?: Condition[];
}

export interface ServiceImportObject {
  apiVersion: typeof ServiceImportApi.apiVersion;
  kind: 'ServiceImport';
  metadata: ObjectMeta;
  spec: ServiceImportSpec;
  status?: ServiceImportStatus;
}

/** The Service the import agent writes: core's shape with what it always sets. */
export interface ServiceObject extends KubeServiceObject {
  apiVersion: 'v1';
  kind: 'Service';
  spec: KubeServiceSpec & {
    type: 'ClusterIP';
    ports: (KubeServicePort & { protocol: string })[];
    sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
  };
}

/** The EndpointSlice the import agent writes: core's shape with what it always sets. */
export interface EndpointSliceObject extends KubeEndpointSliceObject {
  apiVersion: 'discovery.k8s.io/v1';
  kind: 'EndpointSlice';
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: KubeSliceEndpoint[];
}

/** Ownership marker on everything the import agent creates (docs/contributing.md#idempotence). */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'cloudmap-mcs-import-agent';
export const ANNOTATION_DERIVED_SERVICE = 'multicluster.kubernetes.io/derived-service';
/** Hash of what we last applied, so an unchanged object is not re-applied (rule 8). */
export const ANNOTATION_APPLIED = 'multicluster.cloudmap-mcs.io/applied';
