/**
 * The emulator's state: plain JSON-serialisable records, so persistence is a JSON dump and a
 * reset is a fresh object. Times are epoch milliseconds internally; the wire uses seconds.
 */
export type NamespaceType = 'HTTP' | 'DNS_PRIVATE' | 'DNS_PUBLIC';
type OperationStatus = 'SUBMITTED' | 'PENDING' | 'SUCCESS' | 'FAIL';
export type OperationType =
  | 'CREATE_NAMESPACE'
  | 'DELETE_NAMESPACE'
  | 'UPDATE_NAMESPACE'
  | 'UPDATE_SERVICE'
  | 'REGISTER_INSTANCE'
  | 'DEREGISTER_INSTANCE';

export interface Tag {
  Key: string;
  Value: string;
}

export interface NamespaceRecord {
  id: string;
  arn: string;
  name: string;
  httpName: string;
  type: NamespaceType;
  description?: string | undefined;
  vpc?: string | undefined;
  hostedZoneId?: string | undefined;
  soaTtl?: number | undefined;
  createdAt: number;
  creatorRequestId?: string | undefined;
  tags: Tag[];
}

export interface DnsRecordConfig {
  Type: 'SRV' | 'A' | 'AAAA' | 'CNAME';
  TTL: number;
}

export interface ServiceRecord {
  id: string;
  arn: string;
  name: string;
  namespaceId: string;
  description?: string | undefined;
  type: 'HTTP' | 'DNS_HTTP' | 'DNS';
  dnsConfig?: { RoutingPolicy?: string | undefined; DnsRecords: DnsRecordConfig[] } | undefined;
  healthCheckConfig?:
    { Type: string; ResourcePath?: string; FailureThreshold?: number } | undefined;
  healthCheckCustomConfig?: { FailureThreshold?: number } | undefined;
  createdAt: number;
  creatorRequestId?: string | undefined;
  tags: Tag[];
  /** Last InstancesRevision handed out; drawn from the global counter so it never goes down. */
  revision: number;
}

export interface InstanceRecord {
  id: string;
  serviceId: string;
  attributes: Record<string, string>;
  creatorRequestId?: string | undefined;
  /** Custom health (HEALTHY/UNHEALTHY) for services with HealthCheckCustomConfig. */
  customHealth?: 'HEALTHY' | 'UNHEALTHY' | undefined;
  registeredAt: number;
}

/** What an asynchronous operation does when it completes; applied only on SUCCESS. */
export type OperationEffect =
  | { kind: 'createNamespace'; namespace: NamespaceRecord }
  | { kind: 'deleteNamespace'; namespaceId: string }
  | { kind: 'updateNamespace'; namespaceId: string; description: string }
  | { kind: 'updateService'; serviceId: string; patch: Partial<ServiceRecord> }
  | { kind: 'registerInstance'; instance: InstanceRecord }
  | { kind: 'deregisterInstance'; serviceId: string; instanceId: string };

export interface OperationRecord {
  id: string;
  type: OperationType;
  status: OperationStatus;
  createdAt: number;
  updatedAt: number;
  /** When it turns PENDING, and when it finishes. */
  pendingAt: number;
  doneAt: number;
  targets: Partial<Record<'NAMESPACE' | 'SERVICE' | 'INSTANCE', string>>;
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
  /** Forced outcome, decided at submission (admin-injected failure or a known conflict). */
  failWith?: { code: string; message: string } | undefined;
  effect: OperationEffect;
  /** Idempotency key of the request that created it, with a digest of that request. */
  creatorRequestId?: string | undefined;
  requestDigest?: string | undefined;
}

export interface EmulatorState {
  version: 1;
  namespaces: Record<string, NamespaceRecord>;
  services: Record<string, ServiceRecord>;
  /** serviceId → instanceId → instance */
  instances: Record<string, Record<string, InstanceRecord>>;
  /** In submission order: ListOperations pages over this order. */
  operations: OperationRecord[];
  /** Global counter behind every InstancesRevision. */
  revisionCounter: number;
}

export function emptyState(): EmulatorState {
  return {
    version: 1,
    namespaces: {},
    services: {},
    instances: {},
    operations: [],
    revisionCounter: 0,
  };
}

/** Reserved attribute keys that Cloud Map interprets (they don't count as "custom"). */
export const RESERVED_ATTRIBUTE_KEYS: ReadonlySet<string> = new Set([
  'AWS_INSTANCE_IPV4',
  'AWS_INSTANCE_IPV6',
  'AWS_INSTANCE_PORT',
  'AWS_INSTANCE_CNAME',
  'AWS_ALIAS_DNS_NAME',
  'AWS_EC2_INSTANCE_ID',
  'AWS_INIT_HEALTH_STATUS',
]);

/** Adjustable and fixed quotas; defaults from the Cloud Map quotas page. */
export interface Quotas {
  namespacesPerRegion: number;
  instancesPerNamespace: number;
  instancesPerService: number;
  customAttributesPerInstance: number;
  tagsPerResource: number;
}

export const DEFAULT_QUOTAS: Readonly<Quotas> = {
  namespacesPerRegion: 50,
  instancesPerNamespace: 2000,
  instancesPerService: 1000,
  customAttributesPerInstance: 30,
  tagsPerResource: 50,
};
