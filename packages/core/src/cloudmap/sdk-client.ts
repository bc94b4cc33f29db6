import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  createAssumeRoleCredentials,
  type AssumeRoleConfig,
  type CredentialsProvider,
} from './assume-role.js';

export interface ServiceDiscoveryConfig {
  /** From the --region flag; when absent the SDK's standard chain (AWS_REGION, profile, IMDS). */
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
  /** Per-request timeout; a silent connection otherwise waits for the OS. Default 10 s. */
  requestTimeoutMs?: number;
}

/**
 * Builds the SDK client. Retries belong to `createCloudMapClient` (one retry policy with
 * full jitter and metrics), so the SDK makes exactly one attempt per call.
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
  return new ServiceDiscoveryClient({
    maxAttempts: 1,
    requestHandler: { requestTimeout: config.requestTimeoutMs ?? 10_000, connectionTimeout: 5_000 },
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(credentials === undefined ? {} : { credentials }),
    // DiscoverInstances* carry the `data-` host prefix, which a local endpoint cannot serve.
    ...(config.endpoint === undefined
      ? {}
      : { endpoint: config.endpoint, disableHostPrefix: true }),
  });
}
