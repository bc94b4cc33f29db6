import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  createAssumeRoleCredentials,
  type AssumeRoleConfig,
  type CredentialsProvider,
} from './assume-role.js';

export interface ServiceDiscoveryConfig {
  /** The agents' $AWS_REGION; when absent the SDK's standard chain (profile, IMDS). */
  region?: string;
  /**
   * A custom endpoint (the emulator, LocalStack). main.ts reads
   * AWS_ENDPOINT_URL_SERVICEDISCOVERY and passes it here; nothing below main.ts reads env.
   */
  endpoint?: string;
  /** Explicit credentials; otherwise the SDK's default chain (optionally assumed into a role). */
  credentials?: CredentialsProvider;
  /** Cross-account access: assume this role with the base credentials. */
  assumeRole?: AssumeRoleConfig;
  /**
   * Per-request timeout: a request with no answer within it fails (TimeoutError) and its
   * connection is destroyed. Default 5 s; the caller's deadline (calls.ts) bounds the whole
   * call, retries included.
   */
  requestTimeoutMs?: number;
}

export const defaultRequestTimeoutMs = 5_000;

/** The SDK errors that mean "no answer": its request timeout, and an aborted call. */
const noAnswer = new Set(['TimeoutError', 'AbortError']);

/**
 * Builds the SDK client. Retries belong to `createCloudMapClient` (one retry policy with
 * full jitter and metrics), so the SDK makes exactly one attempt per call.
 *
 * A connection that stays open but never answers (a broken NAT, a stuck proxy) must fail the
 * call and never be used again: the request timeout throws (`throwOnRequestTimeout`; without
 * it the SDK only logs a warning and waits forever) and destroys its socket, and after any
 * call that got no answer the idle keep-alive sockets are dropped as well, since they may
 * lead to the same dead path. The next call opens a fresh connection.
 */
export function createServiceDiscoveryClient(
  config: ServiceDiscoveryConfig,
): ServiceDiscoveryClient {
  const credentials =
    config.assumeRole === undefined
      ? config.credentials
      : createAssumeRoleCredentials({
          ...config.assumeRole,
          ...(config.region === undefined ? {} : { region: config.region }),
          ...(config.credentials === undefined ? {} : { baseCredentials: config.credentials }),
        });
  const agents = [
    new HttpAgent({ keepAlive: true, maxSockets: 50 }),
    new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
  ] as const;
  const client = new ServiceDiscoveryClient({
    maxAttempts: 1,
    requestHandler: {
      requestTimeout: config.requestTimeoutMs ?? defaultRequestTimeoutMs,
      throwOnRequestTimeout: true,
      connectionTimeout: 5_000,
      httpAgent: agents[0],
      httpsAgent: agents[1],
    },
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(credentials === undefined ? {} : { credentials }),
    // DiscoverInstances* carry the `data-` host prefix, which a local endpoint cannot serve.
    ...(config.endpoint === undefined
      ? {}
      : { endpoint: config.endpoint, disableHostPrefix: true }),
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && noAnswer.has(error.name)) for (const a of agents) dropIdle(a);
        throw error;
      }
    },
    { step: 'finalizeRequest', name: 'dropIdleSocketsAfterNoAnswer' },
  );
  return client;
}

/** Destroys the agent's idle keep-alive sockets (sockets in use end with their own request). */
function dropIdle(agent: HttpAgent): void {
  for (const sockets of Object.values(agent.freeSockets))
    for (const socket of sockets ?? []) socket.destroy();
}
