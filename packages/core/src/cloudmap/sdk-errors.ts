import {
  CloudMapError,
  cloudMapErrorCodes,
  type CloudMapErrorCode,
} from '../ports/cloudmap-port.js';
import { retryableCloudMapErrorCodes, type CloudMapOperationName } from '../ports/operations.js';

/** The SDK exception names that are our codes as they are. */
const modeled = new Set<string>(cloudMapErrorCodes.filter((c) => c !== 'Unknown'));

/** SDK and common AWS error names that mean the same as one of our codes. */
const aliases: Record<string, CloudMapErrorCode> = {
  TooManyRequestsException: 'ThrottlingException',
  Throttling: 'ThrottlingException',
  ThrottledException: 'ThrottlingException',
  SlowDown: 'ThrottlingException',
  ServiceUnavailableException: 'ServiceUnavailable',
  InternalFailure: 'ServiceUnavailable',
  InternalServerError: 'ServiceUnavailable',
  UnrecognizedClientException: 'AccessDeniedException',
  InvalidSignatureException: 'AccessDeniedException',
  ExpiredTokenException: 'AccessDeniedException',
  AccessDenied: 'AccessDeniedException',
  TooManyTagsException: 'InvalidInput',
  ServiceAttributesLimitExceededException: 'ResourceLimitExceeded',
};

/**
 * Network-level failures (no HTTP response): transient by nature. TimeoutError is the SDK's
 * request timeout (no answer within it; the connection was dropped), AbortError an abandoned
 * call (its deadline; calls.ts replaces it with `deadlineExceeded`).
 */
const networkErrors = new Set([
  'TimeoutError',
  'AbortError',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: number };
  [member: string]: unknown;
}

/** Extra modeled members worth keeping (AlreadyExists carries the existing resource). */
const detailMembers = [
  'NamespaceId',
  'ServiceId',
  'ServiceArn',
  'CreatorRequestId',
  'DuplicateOperationId',
];

/**
 * A call that got no answer within its deadline (calls.ts): retryable, like any network
 * failure, and it counts as a failed call wherever calls are counted (the import agent's
 * reachability, the reconcilers' backoff).
 */
export function deadlineExceeded(operation: CloudMapOperationName, ms: number): CloudMapError {
  return new CloudMapError(
    'ServiceUnavailable',
    `${operation}: no answer from Cloud Map within the call deadline of ${String(ms / 1000)} s (connection dropped)`,
    operation,
    { retryable: true },
  );
}

/**
 * Translates anything the SDK throws into a CloudMapError (docs/contributing.md#pure-core: adapters
 * translate at the edge). Throttling, 5xx and network failures are retryable; the original
 * error is kept as `cause`.
 */
export function toCloudMapError(error: unknown, operation: CloudMapOperationName): CloudMapError {
  if (error instanceof CloudMapError) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const sysCode = typeof e.code === 'string' ? e.code : '';
  const status = e.$metadata?.httpStatusCode;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : name;

  let code: CloudMapErrorCode;
  if (modeled.has(name)) code = name as CloudMapErrorCode;
  else if (aliases[name] !== undefined) code = aliases[name];
  else if (status === 429) code = 'ThrottlingException';
  else if ((status !== undefined && status >= 500) || e.$fault === 'server')
    code = 'ServiceUnavailable';
  else if (networkErrors.has(name) || networkErrors.has(sysCode)) code = 'ServiceUnavailable';
  else if (status === 403) code = 'AccessDeniedException';
  else code = 'Unknown';

  const details: Record<string, string> = {};
  for (const member of detailMembers) {
    const value = e[member];
    if (typeof value === 'string') details[member] = value;
  }
  return new CloudMapError(code, `${operation}: ${name}: ${message}`, operation, {
    cause: error,
    retryable: retryableCloudMapErrorCodes.has(code),
    details,
  });
}
