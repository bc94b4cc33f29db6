import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, globalAgent as httpsGlobalAgent } from 'node:https';
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  createAssumeRoleCredentials,
  type AssumeRoleConfig,
  type CredentialsProvider,
} from './assume-role.js';

export interface ServiceDiscoveryConfig {
  /** The agents' $AWS_REGION; when absent the SDK's standard chain (profile, IMDS). */
  region?: string | undefined;
  /**
   * An endpoint override ($AWS_ENDPOINT_URL_SERVICEDISCOVERY, read by the agents' config;
   * nothing below it reads env). An `https://` host (FIPS, a VPC endpoint) keeps the SDK's
   * `data-` host prefix for DiscoverInstances*, as AWS serves them; a plain `http://` one is a
   * development endpoint (the emulator, LocalStack) that serves every operation on one host.
   */
  endpoint?: string | undefined;
  /**
   * The host that serves DiscoverInstances* when it is not `data-<endpoint host>`: a VPC
   * interface endpoint without private DNS has one name per service
   * ($AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA). Sent to as given, no prefix added.
   */
  dataEndpoint?: string | undefined;
  /** Explicit credentials; otherwise the SDK's default chain (optionally assumed into a role). */
  credentials?: CredentialsProvider;
  /** Cross-account access: assume this role with the base credentials. */
  assumeRole?: AssumeRoleConfig | undefined;
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
 * A plain-HTTP endpoint: AWS serves Cloud Map over TLS only, so this is a local emulator or
 * LocalStack, in development. It gets every operation, DiscoverInstances* included (no
 * `data-` prefix, which such a host could not serve).
 */
export function isDevelopmentEndpoint(endpoint: string): boolean {
  return /^http:\/\//i.test(endpoint);
}

/** The SDK clients of the agents: `data` serves DiscoverInstances*, `control` the rest. */
export interface ServiceDiscoveryClients {
  control: ServiceDiscoveryClient;
  /** `control` itself unless a separate data endpoint is configured. */
  data: ServiceDiscoveryClient;
}

/**
 * The control client, and a second client for DiscoverInstances* when `dataEndpoint` is set
 * (a VPC endpoint without private DNS); both share one credentials provider (one AssumeRole).
 */
export function createServiceDiscoveryClients(
  config: ServiceDiscoveryConfig,
): ServiceDiscoveryClients {
  const credentials =
    config.assumeRole === undefined
      ? config.credentials
      : createAssumeRoleCredentials({
          ...config.assumeRole,
          region: config.region,
          baseCredentials: config.credentials,
        });
  const control = buildClient(config, credentials, config.endpoint, false);
  const data =
    config.dataEndpoint === undefined
      ? control
      : buildClient(config, credentials, config.dataEndpoint, true);
  return { control, data };
}

/**
 * One SDK client for every operation (no separate data endpoint): `createServiceDiscoveryClients`
 * without `dataEndpoint`.
 */
export function createServiceDiscoveryClient(
  config: ServiceDiscoveryConfig,
): ServiceDiscoveryClient {
  const { dataEndpoint: _ignored, ...rest } = config;
  return createServiceDiscoveryClients(rest).control;
}

/**
 * Builds one SDK client. Retries belong to `createCloudMapClient` (one retry policy with
 * full jitter and metrics), so the SDK makes exactly one attempt per call.
 *
 * A connection that stays open but never answers (a broken NAT, a stuck proxy) must fail the
 * call and never be used again: the request timeout throws (`throwOnRequestTimeout`; without
 * it the SDK only logs a warning and waits forever) and destroys its socket, and after any
 * call that got no answer the idle keep-alive sockets are dropped as well, since they may
 * lead to the same dead path. The next call opens a fresh connection.
 */
function buildClient(
  config: ServiceDiscoveryConfig,
  credentials: CredentialsProvider | undefined,
  endpoint: string | undefined,
  isDataHost: boolean,
): ServiceDiscoveryClient {
  // A proxy exactly when Node's own agents use one: NODE_USE_ENV_PROXY=1 (or --use-env-proxy)
  // gives the global agent HTTPS_PROXY / NO_PROXY as `proxyEnv`; agents built here would
  // otherwise ignore them (the SDK reads no proxy variable itself).
  const { proxyEnv } = httpsGlobalAgent.options;
  const proxy = proxyEnv === undefined ? {} : { proxyEnv };
  const agents = [
    new HttpAgent({ keepAlive: true, maxSockets: 50, ...proxy }),
    new HttpsAgent({ keepAlive: true, maxSockets: 50, ...proxy }),
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
    ...(endpoint === undefined ? {} : { endpoint }),
    // DiscoverInstances* carry the `data-` host prefix (AWS serves them on data-<host>); a
    // data endpoint already names that host, and a development endpoint serves all on one.
    ...(endpoint !== undefined && (isDataHost || isDevelopmentEndpoint(endpoint))
      ? { disableHostPrefix: true }
      : {}),
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
