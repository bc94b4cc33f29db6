/**
 * Attribute keys of the Cloud Map record schema (docs/cloudmap-schema.md). The first block is
 * the AWS Go controller's attribute set, written exactly as it writes it so that either
 * implementation reads the other's endpoint instances; the second block is ours.
 */

/** Major schema version. Bumped only for changes an older reader would misread. */
export const SCHEMA_VERSION = '1';

/**
 * The K8S_CONTROLLER value we write. It carries no agent version on purpose: a version in an
 * attribute would make every upgrade rewrite every instance (the schema version is separate).
 */
export const CONTROLLER_NAME = 'cloudmap-mcs';

/** Cloud Map service (per namespace) that holds one heartbeat instance per cluster. */
export const HEARTBEAT_SERVICE_NAME = '_mcs-heartbeat';

/** The AWS controller's endpoint attributes (docs/architecture.md#the-aws-controller, item 1). */
export const Attr = {
  Ipv4: 'AWS_INSTANCE_IPV4',
  Ipv6: 'AWS_INSTANCE_IPV6',
  Port: 'AWS_INSTANCE_PORT',
  EndpointPortName: 'ENDPOINT_PORT_NAME',
  EndpointProtocol: 'ENDPOINT_PROTOCOL',
  Ready: 'READY',
  Hostname: 'HOSTNAME',
  NodeName: 'NODENAME',
  ClusterId: 'CLUSTER_ID',
  ClustersetId: 'CLUSTERSET_ID',
  ServicePortName: 'SERVICE_PORT_NAME',
  ServicePort: 'SERVICE_PORT',
  ServiceTargetPort: 'SERVICE_TARGET_PORT',
  ServiceProtocol: 'SERVICE_PROTOCOL',
  ServiceType: 'SERVICE_TYPE',
  ExportCreated: 'SERVICE_EXPORT_CREATION_TIMESTAMP',
  Controller: 'K8S_CONTROLLER',
  // ---- ours (schema 1) ----
  /** `endpoint` | `export` | `heartbeat`; absent on the AWS controller's endpoint instances. */
  Record: 'MCS_RECORD',
  SchemaVersion: 'MCS_SCHEMA_VERSION',
  Serving: 'SERVING',
  Terminating: 'TERMINATING',
  Zone: 'ZONE',
  /** Export record: compact JSON list of the Service ports. */
  ServicePorts: 'SERVICE_PORTS',
  SessionAffinity: 'SESSION_AFFINITY',
  SessionAffinityTimeout: 'SESSION_AFFINITY_TIMEOUT_SECONDS',
  InternalTrafficPolicy: 'INTERNAL_TRAFFIC_POLICY',
  TrafficDistribution: 'TRAFFIC_DISTRIBUTION',
  IpFamilies: 'IP_FAMILIES',
  ExportedLabels: 'EXPORTED_LABELS',
  ExportedAnnotations: 'EXPORTED_ANNOTATIONS',
  HeartbeatRenewedAt: 'HEARTBEAT_RENEWED_AT',
  HeartbeatPeriodSeconds: 'HEARTBEAT_PERIOD_SECONDS',
  /**
   * Heartbeat: digest of the names of the services this cluster exports in the namespace. It
   * changes when an export starts or ends, so importers learn of new services from the
   * heartbeat they already poll instead of waiting for the slow listing.
   */
  HeartbeatExports: 'HEARTBEAT_EXPORTS',
  /** Change feed (records/feed.ts): the writer's incarnation; a new one means "sweep". */
  FeedEpoch: 'FEED_EPOCH',
  /** Change feed: sequence number of the latest change written. */
  FeedSeq: 'FEED_SEQ',
  /** Change feed: every change with a sequence number above this one is listed. */
  FeedFloor: 'FEED_FLOOR',
  FeedUpdatedAt: 'FEED_UPDATED_AT',
  /** Change feed: `ns/name:seq` entries, comma-separated, over `FEED_CHANGES`, `.2`, `.3`, … */
  FeedChanges: 'FEED_CHANGES',
} as const;

export type RecordKind = 'endpoint' | 'export' | 'heartbeat';
