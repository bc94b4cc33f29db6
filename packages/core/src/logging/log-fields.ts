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
  delayMs: 'delayMs',
  attempt: 'attempt',
  /** A serialized error (see `serializeError`). */
  error: 'err',
  reason: 'reason',
  namespace: 'namespace',
  name: 'name',
  kind: 'kind',
  resource: 'resource',
  clusterId: 'clusterId',
  clustersetId: 'clustersetId',
  cloudMapOperation: 'cloudMapOperation',
  operationId: 'operationId',
  cloudMapNamespace: 'cloudMapNamespace',
  lease: 'lease',
  holderIdentity: 'holderIdentity',
  signal: 'signal',
  address: 'address',
  config: 'config',
} as const;
