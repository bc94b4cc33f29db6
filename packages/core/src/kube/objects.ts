/**
 * Object metadata and the core Kubernetes objects both agents use (Service, EndpointSlice), as
 * the API serves them (JSON), only the fields the agents use. The adapters hand these over, so
 * reconcilers and pure builders need no @kubernetes/client-node types.
 */
import type { Timestamp } from './conditions.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: Timestamp;
  deletionTimestamp?: Timestamp;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

/** A Service port as the API serves it. */
export interface KubeServicePort {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

/** The Service spec fields the agents read or write. */
export interface KubeServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: KubeServicePort[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  internalTrafficPolicy?: string;
  trafficDistribution?: string | undefined;
}

/** A core/v1 Service as read (the import agent narrows it to what it writes). */
export interface ServiceObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: KubeServiceSpec;
}

export interface KubeSliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  /** The pod behind the address (the export agent's pod label attributes read its labels). */
  targetRef?: { kind?: string; namespace?: string; name?: string };
}

export interface KubeSlicePort {
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

/** A discovery.k8s.io/v1 EndpointSlice as read (the import agent narrows it to what it writes). */
export interface EndpointSliceObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  addressType: string;
  endpoints?: KubeSliceEndpoint[];
  ports?: KubeSlicePort[];
}
