import type { Condition, CustomResourceApi, ObjectMeta } from '@cloudmap-mcs/core';

/**
 * CloudMapServiceImport (multicluster.cloudmap-mcs.io/v1alpha1): the user's explicit choice of
 * one Cloud Map service, written by something other than an MCS export agent (ECS, EC2, a
 * mesh), to import into this Kubernetes namespace under this object's name (ADR 0014,
 * docs/external-services.md). Only the fields the agent reads, as JSON.
 */

export const ExternalApi = {
  group: 'multicluster.cloudmap-mcs.io',
  version: 'v1alpha1',
  plural: 'cloudmapserviceimports',
  kind: 'CloudMapServiceImport',
  apiVersion: 'multicluster.cloudmap-mcs.io/v1alpha1',
} as const satisfies CustomResourceApi;

/** On the ServiceImport: which Cloud Map service it was read from (`<namespace>/<service>`). */
export const ANNOTATION_CLOUD_MAP_SERVICE = 'multicluster.cloudmap-mcs.io/cloud-map-service';
/** On the ServiceImport: imported from a CloudMapServiceImport, not from MCS exports. */
export const LABEL_EXTERNAL = 'multicluster.cloudmap-mcs.io/external';

export interface ExternalPortSpec {
  name?: string;
  protocol?: string;
  port: number;
}

interface ExternalSpec {
  cloudMap: {
    namespace: string;
    service: string;
    queryParameters?: Record<string, string>;
  };
  type?: 'ClusterSetIP' | 'Headless';
  ports?: ExternalPortSpec[];
}

export interface ExternalStatus {
  observedGeneration?: number;
  /** Instances read on the last successful read, by what became of them. */
  instances?: { healthy: number; unhealthy: number; refused: number };
  conditions?: Condition[];
}

export interface ExternalObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Partial<ExternalSpec>;
  status?: ExternalStatus;
}
