/**
 * The narrow port through which everything above it talks to Cloud Map (docs/contributing.md#pure-core):
 * only the operations the agents call, in our own types. The AWS SDK adapter lives in
 * packages/core/src/cloudmap; tests use an in-memory fake of this interface.
 */

export type NamespaceType = 'HTTP' | 'DNS_PRIVATE' | 'DNS_PUBLIC';

export interface CloudMapNamespace {
  id: string;
  name: string;
  type: NamespaceType;
  arn?: string;
}

export type DnsRecordType = 'A' | 'AAAA' | 'SRV' | 'CNAME';

/** A service's Route 53 records (DNS namespaces only): what each instance must carry. */
export interface ServiceDnsConfig {
  routingPolicy: 'MULTIVALUE' | 'WEIGHTED';
  records: { type: DnsRecordType; ttl: number }[];
}

/** How a service is created beyond its name; absent: no DnsConfig, no health check. */
export interface ServiceSpec {
  dnsConfig?: ServiceDnsConfig;
  /** HealthCheckCustomConfig: instances' health comes from AWS_INIT_HEALTH_STATUS. */
  customHealth?: boolean;
}

export interface CloudMapService {
  id: string;
  name: string;
  namespaceId: string;
  arn?: string;
  /** Present for services with Route 53 records (ListServices' ServiceSummary has it). */
  dnsConfig?: ServiceDnsConfig;
  /** The service has HealthCheckCustomConfig. */
  customHealth?: boolean;
  /**
   * ListServices' InstanceCount (every instance, any clusterset); absent elsewhere. A hint
   * only: the import agent checks a service whose count moved (change feed, ADR 0018).
   */
  instanceCount?: number;
}

export interface CloudMapInstance {
  id: string;
  attributes: Record<string, string>;
  /**
   * DiscoverInstances' HealthStatus of the instance (UNKNOWN for services without a health
   * check); absent where the read does not report it (ListInstances).
   */
  health?: 'HEALTHY' | 'UNHEALTHY' | 'UNKNOWN';
}

export type OperationStatus = 'SUBMITTED' | 'PENDING' | 'SUCCESS' | 'FAIL';

export interface OperationRef {
  operationId: string;
}

export interface OperationState {
  operationId: string;
  status: OperationStatus;
  errorCode?: string;
  errorMessage?: string;
  /** What the operation acted on (GetOperation `Targets`): NAMESPACE, SERVICE, INSTANCE ids. */
  targets?: Partial<Record<'NAMESPACE' | 'SERVICE' | 'INSTANCE', string>>;
}

export type Tags = Record<string, string>;

/**
 * Per-call options. `signal` abandons the call: the client's caller passes each call's
 * deadline here (calls.ts), so a call that gets no answer fails and its connection is dropped.
 */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface CloudMapPort {
  listNamespaces(options?: CallOptions): Promise<CloudMapNamespace[]>;
  createHttpNamespace(
    name: string,
    tags: Tags,
    creatorRequestId?: string,
    options?: CallOptions,
  ): Promise<OperationRef>;
  /** A DNS_PRIVATE namespace (a Route 53 private hosted zone `name`) in `vpc`. */
  createPrivateDnsNamespace(
    name: string,
    vpc: string,
    tags: Tags,
    creatorRequestId?: string,
    options?: CallOptions,
  ): Promise<OperationRef>;
  listServices(namespaceId: string, options?: CallOptions): Promise<CloudMapService[]>;
  createService(
    namespaceId: string,
    name: string,
    tags: Tags,
    creatorRequestId?: string,
    spec?: ServiceSpec,
    options?: CallOptions,
  ): Promise<CloudMapService>;
  deleteService(serviceId: string, options?: CallOptions): Promise<void>;
  /** Every instance of a service (paginated ListInstances, control plane). */
  listInstances(serviceId: string, options?: CallOptions): Promise<CloudMapInstance[]>;
  /** Data plane; `queryParameters` are exact-match attribute filters (AND). */
  discoverInstances(
    namespaceName: string,
    serviceName: string,
    queryParameters?: Record<string, string>,
    options?: CallOptions,
  ): Promise<{ instances: CloudMapInstance[]; revision: number }>;
  discoverInstancesRevision(
    namespaceName: string,
    serviceName: string,
    options?: CallOptions,
  ): Promise<number>;
  /** Create or replace (same ID replaces the attributes). Asynchronous: returns an operation. */
  registerInstance(
    serviceId: string,
    instanceId: string,
    attributes: Record<string, string>,
    options?: CallOptions,
  ): Promise<OperationRef>;
  deregisterInstance(
    serviceId: string,
    instanceId: string,
    options?: CallOptions,
  ): Promise<OperationRef>;
  getOperation(operationId: string, options?: CallOptions): Promise<OperationState>;
}

/** Cloud Map error names the agents branch on (the SDK's exception `name`), and `Unknown`. */
export const cloudMapErrorCodes = [
  'NamespaceNotFound',
  'ServiceNotFound',
  'InstanceNotFound',
  'NamespaceAlreadyExists',
  'ServiceAlreadyExists',
  'ResourceInUse',
  'DuplicateRequest',
  'InvalidInput',
  'OperationNotFound',
  'ResourceLimitExceeded',
  'ThrottlingException',
  'RequestLimitExceeded',
  'AccessDeniedException',
  'ServiceUnavailable',
  'Unknown',
] as const;
export type CloudMapErrorCode = (typeof cloudMapErrorCodes)[number];

/** A failed Cloud Map call, translated from the SDK at the adapter edge. */
export class CloudMapError extends Error {
  override readonly name = 'CloudMapError';
  constructor(
    readonly code: CloudMapErrorCode,
    message: string,
    readonly operation: string,
    options?: { cause?: unknown; retryable?: boolean; details?: Readonly<Record<string, string>> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options?.retryable ?? false;
    this.details = options?.details ?? {};
  }
  readonly retryable: boolean;
  /**
   * Extra members of the error, e.g. `ServiceId`/`NamespaceId`/`CreatorRequestId` on
   * ServiceAlreadyExists/NamespaceAlreadyExists, so "already exists" can be treated as success.
   */
  readonly details: Readonly<Record<string, string>>;
}

export const isCloudMapError = (e: unknown, code?: CloudMapErrorCode): e is CloudMapError =>
  e instanceof CloudMapError && (code === undefined || e.code === code);

/** The service or its namespace does not exist: for a read, an answer rather than a failure. */
export const isCloudMapNotFound = (e: unknown): boolean =>
  isCloudMapError(e, 'ServiceNotFound') || isCloudMapError(e, 'NamespaceNotFound');
