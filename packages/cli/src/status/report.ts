/** The `status` report: what `-o json` prints and what the table renders. */
import type { ClusterIdentity } from '@cloudmap-mcs/core';
import type { Condition } from '../kube/objects.js';

export interface ExportRow {
  namespace: string;
  name: string;
  createdAt: string;
  /** Status of the Valid / Ready / Conflict conditions ('' when absent). */
  valid: string;
  ready: string;
  conflict: string;
  /** Reasons and messages of the conditions that are not in their healthy state. */
  problems: string[];
  conditions: Condition[];
}

export interface ClusterEndpoints {
  cluster: string;
  endpoints: number;
  readyEndpoints: number;
}

export interface ImportRow {
  namespace: string;
  name: string;
  type: string;
  ips: string[];
  ports: string[];
  /** status.clusters, with the endpoint counts of the imported EndpointSlices per source cluster. */
  clusters: ClusterEndpoints[];
  /** Status of the Ready condition the import agent writes ('' when absent). */
  ready: string;
  /** Reason and message of the conditions that are not healthy (Ready≠True). */
  problems: string[];
  conditions: Condition[];
  /** From a CloudMapServiceImport (a non-Kubernetes Cloud Map service), not from MCS exports. */
  external?: boolean;
}

interface RecordCluster extends ClusterEndpoints {
  hasExportRecord: boolean;
  type: string;
  ports: string[];
  exportCreatedAt: string;
}

export interface RecordRow {
  namespace: string;
  name: string;
  clusters: RecordCluster[];
  /** Instances the codec could not read. */
  rejected: number;
}

interface HeartbeatRow {
  cluster: string;
  renewedAt: string;
  ageSeconds: number;
}

export type CloudMapSection =
  | {
      available: true;
      clustersetId: string;
      namespaces: string[];
      services: RecordRow[];
      heartbeats: HeartbeatRow[];
    }
  | { available: false; reason: string };

type DriftKind =
  | 'not-in-cloudmap'
  | 'stale-in-cloudmap'
  | 'import-missing'
  | 'import-orphaned'
  | 'import-not-ready'
  | 'import-clusters'
  | 'import-endpoints'
  | 'no-clusterset-ip';

export interface Drift {
  kind: DriftKind;
  namespace: string;
  name: string;
  cluster?: string;
  message: string;
}

export interface StatusReport {
  context: string;
  server: string;
  cluster: ClusterIdentity | null;
  /** The namespaces looked at (the cluster's, or the one of --namespace when it exists). */
  namespaces: string[];
  exports: ExportRow[];
  imports: ImportRow[];
  cloudMap: CloudMapSection;
  /** null when drift could not be computed (Cloud Map or identity unavailable). */
  drift: Drift[] | null;
  /** What could not be read, in words. */
  errors: string[];
}
