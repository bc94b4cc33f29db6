/**
 * The domain model shared by both agents. It is what one cluster exports for one Service,
 * independent of how it is stored in Cloud Map (see ../records for the codec) and of the
 * Kubernetes client types (adapters translate at the edges).
 */

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type ServiceImportType = 'ClusterSetIP' | 'Headless';
export type IPFamily = 'IPv4' | 'IPv6';
export type AddressType = IPFamily;
export type SessionAffinity = 'None' | 'ClientIP';
export type InternalTrafficPolicy = 'Cluster' | 'Local';

/** Who a cluster is (KEP-2149 ClusterProperty values). */
export interface ClusterIdentity {
  /** `cluster.clusterset.k8s.io`: unique within the clusterset. */
  clusterId: string;
  /** `clusterset.k8s.io`. */
  clustersetId: string;
}

/** A port of the exported Service (ServiceImport ports are built from these). */
export interface ServicePort {
  /** Empty string when the Service has a single unnamed port. */
  name: string;
  protocol: Protocol;
  port: number;
  appProtocol?: string;
  /**
   * The Service's targetPort as written (a number or a port name, rendered as a string), kept
   * for the AWS controller's SERVICE_TARGET_PORT attribute. Importers do not need it: endpoint
   * ports already carry the resolved number.
   */
  targetPort?: string;
}

/** One port of an endpoint (the EndpointSlice port, i.e. the resolved target port). */
export interface EndpointPort {
  name: string;
  protocol: Protocol;
  port: number;
  appProtocol?: string;
}

export interface EndpointConditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

/** One backend address of one cluster, with every port it serves. */
export interface Endpoint {
  address: string;
  addressType: AddressType;
  ports: EndpointPort[];
  conditions: EndpointConditions;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  /**
   * Extra attributes written on this endpoint's instances as they are (pod label attributes,
   * docs/cloudmap-schema.md); absent for exports that do not opt in.
   */
  attributes?: Record<string, string>;
}

/** Service-level properties one cluster exports (the per-cluster export record). */
export interface ServiceProperties {
  type: ServiceImportType;
  ports: ServicePort[];
  sessionAffinity: SessionAffinity;
  /** ClientIP timeout in seconds, when sessionAffinity is ClientIP. */
  sessionAffinityTimeoutSeconds?: number;
  internalTrafficPolicy?: InternalTrafficPolicy;
  trafficDistribution?: string;
  ipFamilies: IPFamily[];
  exportedLabels: Record<string, string>;
  exportedAnnotations: Record<string, string>;
  /** ServiceExport creationTimestamp in ms since the epoch: the conflict-resolution order. */
  exportCreatedAtMs: number;
}

/** Everything one cluster exports for one `<namespace>/<name>`. */
export interface ClusterExport {
  namespace: string;
  name: string;
  cluster: ClusterIdentity;
  properties: ServiceProperties;
  endpoints: Endpoint[];
  /**
   * False when the export was read from records without an export record (the AWS Go
   * controller writes endpoint instances only); its properties are then inferred from the
   * endpoint attributes.
   */
  hasExportRecord: boolean;
}

/** Per-cluster liveness written by each export agent and read by import agents. */
export interface Heartbeat {
  cluster: ClusterIdentity;
  /** ms since the epoch when the export agent last renewed it. */
  renewedAtMs: number;
  /** How often the export agent renews it; lets a reader tell late from stale. */
  periodSeconds?: number;
  /** Digest of the names of the services the cluster exports in this namespace. */
  exportsDigest?: string;
  /**
   * The writer's change feed when it renewed: its epoch and the sequence number it had
   * written (ADR 0018). Readers trust the feed record of this cluster only while this agrees.
   */
  feed?: { epoch: string; seq: number };
}
