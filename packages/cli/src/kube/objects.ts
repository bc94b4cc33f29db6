/**
 * The few Kubernetes objects the CLI reads, in its own minimal shapes. The adapter
 * (./reader.ts) translates the API's JSON into these; everything above works on them only,
 * so the status and doctor logic is pure and table-tested.
 */

import type { Condition } from '@cloudmap-mcs/core';

export type { Condition } from '@cloudmap-mcs/core';

export interface ServiceExportInfo {
  namespace: string;
  name: string;
  createdAt: string;
  conditions: Condition[];
}

export interface ServiceImportPort {
  name: string;
  protocol: string;
  port: number;
}

export interface ServiceImportInfo {
  namespace: string;
  name: string;
  type: string;
  ips: string[];
  ports: ServiceImportPort[];
  /** `status.clusters[].cluster`. */
  clusters: string[];
  /**
   * Imported from a non-Kubernetes Cloud Map service by a CloudMapServiceImport (label
   * multicluster.cloudmap-mcs.io/external=true, ADR 0014): no MCS records back it.
   */
  external?: boolean;
}

/** An EndpointSlice labelled `multicluster.kubernetes.io/service-name` (written by the import agent). */
export interface ImportedSliceInfo {
  namespace: string;
  name: string;
  serviceName: string;
  sourceCluster: string;
  /** Every endpoint address, and those whose `ready` condition is not false. */
  addresses: string[];
  readyAddresses: string[];
}

interface CrdVersionInfo {
  name: string;
  served: boolean;
  storage: boolean;
}

export interface CrdInfo {
  name: string;
  versions: CrdVersionInfo[];
  established: boolean;
}

export interface ClusterPropertyInfo {
  name: string;
  value: string;
}

export interface DeploymentInfo {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  images: string[];
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
}
