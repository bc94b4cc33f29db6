/**
 * moto's known gaps against the Cloud Map API, by name. The contract suite asserts AWS's
 * behaviour on the emulator and, where moto deviates, asserts what moto does instead: if moto
 * is fixed, that assertion fails and the entry must be removed here and in
 * docs/cloudmap-emulator.md (a unit test keeps the two in step).
 */
export const MOTO_DEVIATIONS = {
  'operations-finish-instantly':
    'Asynchronous operations are SUCCESS from the start; SUBMITTED and PENDING are never seen.',
  'operation-targets-instance-only':
    'REGISTER_INSTANCE/DEREGISTER_INSTANCE operations carry only the INSTANCE target, not SERVICE and NAMESPACE.',
  'namespace-no-service-count': 'GetNamespace has no ServiceCount.',
  'hosted-zone-id-path':
    'HostedZoneId is a Route 53 resource path (/hostedzone/<id>) instead of the bare zone ID (Z…).',
  'no-namespace-already-exists':
    'A second HTTP namespace with the same name is created instead of NamespaceAlreadyExists.',
  'no-creator-request-id-idempotency':
    'Repeating a create with the same CreatorRequestId starts a new operation instead of answering the first one.',
  'list-namespaces-ignores-filters': 'ListNamespaces ignores Filters and returns every namespace.',
  'list-namespaces-no-pagination':
    'ListNamespaces ignores MaxResults and never returns a NextToken.',
  'delete-namespace-in-use':
    'DeleteNamespace succeeds while the namespace still has services (no ResourceInUse).',
  'no-namespace-quota': 'More than 50 namespaces can be created (no ResourceLimitExceeded).',
  'namespace-name-not-validated': 'Namespace names outside the documented pattern are accepted.',
  'create-service-unknown-namespace':
    'CreateService in a namespace that does not exist succeeds (no NamespaceNotFound).',
  'no-service-already-exists':
    'A second service with the same name in a namespace is created (no ServiceAlreadyExists).',
  'service-dns-config-not-validated':
    'DnsConfig is accepted where AWS refuses it (HTTP namespaces, invalid record combinations, CNAME without WEIGHTED), and so is a Route 53 health check in a private DNS namespace.',
  'update-service-dns-types-change':
    'UpdateService replaces the DNS record types (A becomes AAAA) instead of answering InvalidInput: AWS changes only their TTLs.',
  'no-dns-records':
    "A DNS namespace's hosted zone is named `<name>-hz` and RegisterInstance writes no records into it: nothing answers A or SRV queries for the service.",
  'list-services-ignores-filters':
    'ListServices ignores the NAMESPACE_ID filter and returns services of every namespace.',
  'list-services-no-pagination': 'ListServices ignores MaxResults and never returns a NextToken.',
  'delete-service-in-use':
    'DeleteService succeeds while instances are registered (no ResourceInUse).',
  'delete-service-unknown': 'DeleteService of an unknown ID succeeds (no ServiceNotFound).',
  'register-appends-duplicate':
    'RegisterInstance with an existing InstanceId adds a second instance instead of replacing the first.',
  'attributes-not-validated':
    'Instance attribute limits (30 custom, 1,024-character values, 255-character keys, 5,000 total) are not enforced.',
  'dns-attributes-not-required':
    'Instances of DNS services are accepted without the AWS_INSTANCE_* attributes their records need.',
  'no-instance-quota':
    'More than 1,000 instances can be registered in one service (no ResourceLimitExceeded).',
  'no-duplicate-request':
    'A second RegisterInstance for an instance whose registration is running is accepted.',
  'health-status-always-healthy':
    'Instances report HEALTHY even without a health check (AWS reports UNKNOWN), and AWS_INIT_HEALTH_STATUS is ignored.',
  'custom-health-not-required':
    'UpdateInstanceCustomHealthStatus succeeds for services without HealthCheckCustomConfig (no CustomHealthNotFound).',
  'custom-health-bad-status':
    'UpdateInstanceCustomHealthStatus with a Status other than HEALTHY or UNHEALTHY answers CustomHealthNotFound instead of InvalidInput.',
  'revision-not-monotonic':
    'DiscoverInstancesRevision sums per-instance counters, so it goes down after a deregistration.',
  'list-operations-ignores-filters':
    'ListOperations ignores Filters and lists only operations whose target is a namespace.',
  'update-namespace-lowercase-operation-id':
    'UpdateHttpNamespace answers {"operationId": ...} in lower case, so the SDK sees no OperationId.',
  'tags-unknown-resource':
    'ListTagsForResource of an unknown ARN answers an empty list (no ResourceNotFoundException).',
  'no-tag-limit': 'A resource can get more than 50 tags (no TooManyTagsException).',
  'lengths-not-validated':
    'Inputs over their modeled length limits are looked up instead of answered InvalidInput.',
  'unknown-operation-error':
    'An unknown X-Amz-Target answers an HTML 500 page instead of UnknownOperationException.',
} as const;

export type DeviationName = keyof typeof MOTO_DEVIATIONS;

/** Deviations actually asserted against moto in this process, for the run's report. */
export const observedDeviations = new Set<DeviationName>();
