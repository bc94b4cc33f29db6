/**
 * The shapes of the Kubernetes objects the export agent reads, as the API serves them (JSON).
 * Only the fields we use; the informer adapter hands these over, so the reconciler and the
 * pure builders need no @kubernetes/client-node types. Metadata, conditions, Service and
 * EndpointSlice are core's (one vocabulary for both agents and the CLI).
 */

import type { Condition, ObjectMeta } from '@cloudmap-mcs/core';

export type { EndpointSliceObject, ServiceObject } from '@cloudmap-mcs/core';

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
