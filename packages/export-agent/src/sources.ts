import type { ClusterIdentity, Condition } from '@cloudmap-mcs/core';
import type { EndpointSliceObject, ServiceExportObject, ServiceObject } from './k8s-types.js';

/**
 * Read side: the informer caches, as the reconciler sees them
 * (docs/architecture.md#how-each-agent-reconciles, step 1).
 */
export interface ExportSources {
  /** Undefined while ClusterProperties are missing or invalid. */
  identity(): ClusterIdentity | undefined;
  serviceExport(namespace: string, name: string): ServiceExportObject | undefined;
  service(namespace: string, name: string): ServiceObject | undefined;
  /** Slices labelled `kubernetes.io/service-name=<name>` in the namespace. */
  endpointSlices(namespace: string, serviceName: string): EndpointSliceObject[];
  /**
   * True while the export's Service and EndpointSlices are still being read (the caches keep
   * only stubs of objects no export named when they were last seen); the reconciler waits.
   */
  loading?(namespace: string, name: string): boolean;
  /** Every ServiceExport key (`ns/name`) in the cache. */
  serviceExportKeys(): string[];
  /** A pod's labels (pod label attributes); undefined when unknown or not watched. */
  podLabels?(namespace: string, name: string): Readonly<Record<string, string>> | undefined;
  /**
   * Whether pods' labels can be read yet. The first call may start the pod watch, so an
   * export is not written without its labels first and with them a moment later.
   */
  podLabelsReady?(): boolean;
}

export type EventType = 'Normal' | 'Warning';

/** Write side: what the export agent changes in its own cluster. */
export interface ServiceExportWriter {
  addFinalizer(se: ServiceExportObject, finalizer: string): Promise<void>;
  removeFinalizer(se: ServiceExportObject, finalizer: string): Promise<void>;
  /** Replaces status.conditions (status subresource). */
  writeConditions(se: ServiceExportObject, conditions: Condition[]): Promise<void>;
  /** Fire and forget: an Event that cannot be written is logged, never fails a reconcile. */
  event(se: ServiceExportObject, type: EventType, reason: string, message: string): void;
}

export const FINALIZER = 'cloudmap-mcs.io/export-records';
