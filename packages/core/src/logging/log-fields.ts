/**
 * The field names of every structured log entry (docs/contributing.md#config-and-logs). Use these
 * constants so the same thing is always called the same way and can be queried across both agents.
 */
export const logFields = {
  /** The agent component: 'export-agent', 'import-agent'. */
  agent: 'agent',
  component: 'component',
  controller: 'controller',
  /** Work-queue key, `namespace/name`. */
  key: 'key',
  reconcileId: 'reconcileId',
  outcome: 'outcome',
  durationMs: 'durationMs',
  delayMs: 'delayMs',
  attempt: 'attempt',
  /** A serialized error (see `serializeError`). */
  error: 'err',
  reason: 'reason',
  namespace: 'namespace',
  name: 'name',
  kind: 'kind',
  resource: 'resource',
  resourceVersion: 'resourceVersion',
  clusterId: 'clusterId',
  clustersetId: 'clustersetId',
  cloudMapOperation: 'cloudMapOperation',
  operationId: 'operationId',
  operationStatus: 'operationStatus',
  cloudMapNamespace: 'cloudMapNamespace',
  cloudMapService: 'cloudMapService',
  serviceId: 'serviceId',
  instanceId: 'instanceId',
  lease: 'lease',
  holderIdentity: 'holderIdentity',
  signal: 'signal',
  address: 'address',
  config: 'config',
  check: 'check',
} as const;
