/**
 * The shapes of the Kubernetes objects the export agent reads, as the API serves them (JSON).
 * Only the fields we use; the informer adapter hands these over, so the reconciler and the
 * pure builders need no @kubernetes/client-node types. Metadata and conditions are core's (one
 * vocabulary for both agents and the CLI).
 */

import type { Condition, ObjectMeta } from '@cloudmap-mcs/core';

export interface ServiceExportObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: {
    exportedLabels?: Record<string, string>;
    exportedAnnotations?: Record<string, string>;
  };
  status?: { conditions?: Condition[] };
}

interface ServicePortSpec {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

export interface ServiceObject {
  metadata: ObjectMeta;
  spec?: {
    type?: string;
    clusterIP?: string;
    ports?: ServicePortSpec[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    internalTrafficPolicy?: string;
    trafficDistribution?: string;
    ipFamilies?: string[];
  };
}

export interface EndpointSliceObject {
  metadata: ObjectMeta;
  addressType: string;
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    hostname?: string;
    nodeName?: string;
    zone?: string;
    /** The pod behind the address (pod label attributes read its labels). */
    targetRef?: { kind?: string; namespace?: string; name?: string };
  }[];
  ports?: { name?: string; protocol?: string; port?: number; appProtocol?: string }[];
}
