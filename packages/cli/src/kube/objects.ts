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
  /** `status.conditions` (the import agent writes `Ready`). */
  conditions: Condition[];
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
  /** The pod template's ServiceAccount ('' = default). */
  serviceAccountName: string;
  /**
   * The first container's env entries that carry a literal `value`. Entries from `valueFrom`
   * (secretKeyRef, configMapKeyRef, fieldRef) are left out: the CLI never resolves them.
   */
  env: Record<string, string>;
  /** spec.selector.matchLabels, to find the Deployment's pods. */
  selector: Record<string, string>;
}

export interface PodInfo {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** The Ready condition is True. */
  ready: boolean;
  phase: string;
  /** Names of the first container's env variables (values are never read). */
  envNames: string[];
  containers: string[];
  /** The container port named `metrics`, else `health` (the agents serve /metrics there). */
  metricsPort: number | undefined;
}

export interface LeaseInfo {
  namespace: string;
  name: string;
  holderIdentity: string;
  /** ISO time of the last renewal ('' when never). */
  renewTime: string;
  leaseDurationSeconds: number;
}

export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  annotations: Record<string, string>;
}
