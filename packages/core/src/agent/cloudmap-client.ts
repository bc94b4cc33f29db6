import type { Registry } from 'prom-client';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import {
  createCloudMapClient,
  type CloudMapClient,
  type CloudMapClientOptions,
} from '../cloudmap/client.js';
import { createCloudMapMetrics } from '../cloudmap/metrics.js';
import { createSdkCloudMapPort } from '../cloudmap/sdk-port.js';
import { createServiceDiscoveryClients, isDevelopmentEndpoint } from '../cloudmap/sdk-client.js';
import { roleSessionName } from '../cloudmap/assume-role.js';
import { leaderOnly } from '../runtime/leader-election.js';
import type { CommonConfig } from './config.js';

/**
 * The agent's one Cloud Map client: the SDK (region, endpoint, assume-role from the config),
 * every call bound to `leading` (ADR 0020), with the agent's own options (`overrides`: write
 * rate limits, cache TTLs) and its call metrics in `registry`. An assumed role's session is named
 * after the agent and `clusterId()` at each AssumeRole (CloudTrail-readable).
 */
export function agentCloudMapClient(
  agent: string,
  config: CommonConfig,
  overrides: Partial<CloudMapClientOptions> | undefined,
  registry: Registry,
  logger: Logger,
  leading: AbortSignal,
  clusterId: () => string | undefined = () => undefined,
): CloudMapClient {
  const endpoint = config.cloudMapEndpoint;
  if (endpoint !== undefined && isDevelopmentEndpoint(endpoint))
    logger.warn(
      'development Cloud Map endpoint (plain HTTP): every call goes to it, DiscoverInstances without the data- host; a local emulator only, never AWS',
      { [logFields.address]: endpoint },
    );
  const sdk = createServiceDiscoveryClients({
    region: config.region,
    endpoint,
    dataEndpoint: config.cloudMapDataEndpoint,
    assumeRole:
      config.assumeRoleArn === undefined
        ? undefined
        : {
            roleArn: config.assumeRoleArn,
            sessionName: () => roleSessionName(agent, clusterId()),
            externalId: config.assumeRoleExternalId,
          },
  });
  return createCloudMapClient(leaderOnly(createSdkCloudMapPort(sdk.control, sdk.data), leading), {
    logger: logger.child({ component: 'cloudmap' }),
    metrics: createCloudMapMetrics(registry),
    ...overrides,
  });
}
