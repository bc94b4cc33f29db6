import type { CloudMapErrorCode, CloudMapPort } from './cloudmap-port.js';

/** The name of one `CloudMapPort` method; used for rate limits, metrics and fault injection. */
export type CloudMapOperationName = keyof CloudMapPort;

/** Every operation of the port, in declaration order. */
export const cloudMapOperations: readonly CloudMapOperationName[] = [
  'listNamespaces',
  'createHttpNamespace',
  'createPrivateDnsNamespace',
  'listServices',
  'createService',
  'deleteService',
  'listInstances',
  'discoverInstances',
  'discoverInstancesRevision',
  'registerInstance',
  'deregisterInstance',
  'getOperation',
];

/**
 * Operations that change Cloud Map. The import agent's IAM policy is read-only, and tests
 * assert "a restart with nothing changed writes nothing" by counting these.
 */
export const cloudMapWriteOperations: ReadonlySet<CloudMapOperationName> = new Set([
  'createHttpNamespace',
  'createPrivateDnsNamespace',
  'createService',
  'deleteService',
  'registerInstance',
  'deregisterInstance',
]);

export const isWriteOperation = (op: CloudMapOperationName): boolean =>
  cloudMapWriteOperations.has(op);

/** Error codes a retry may fix: throttling and transient server errors. */
export const retryableCloudMapErrorCodes: ReadonlySet<CloudMapErrorCode> = new Set([
  'ThrottlingException',
  'RequestLimitExceeded',
  'ServiceUnavailable',
]);

export const isThrottlingCode = (code: CloudMapErrorCode): boolean =>
  code === 'ThrottlingException' || code === 'RequestLimitExceeded';
