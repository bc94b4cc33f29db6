/**
 * Object metadata as the API serves it (JSON), only the fields the agents use. The adapters hand
 * these over, so reconcilers and pure builders need no @kubernetes/client-node types.
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
