import type { Registry } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import {
  createCloudMapClient,
  type CloudMapClient,
  type CloudMapClientOptions,
} from '../cloudmap/client.js';
import { createCloudMapMetrics } from '../cloudmap/metrics.js';
import { createSdkCloudMapPort } from '../cloudmap/sdk-port.js';
import { createServiceDiscoveryClient } from '../cloudmap/sdk-client.js';
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
  const sdk = createServiceDiscoveryClient({
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(config.cloudMapEndpoint === undefined ? {} : { endpoint: config.cloudMapEndpoint }),
    ...(config.assumeRoleArn === undefined
      ? {}
      : {
          assumeRole: {
            roleArn: config.assumeRoleArn,
            sessionName: () => roleSessionName(agent, clusterId()),
            ...(config.assumeRoleExternalId === undefined
              ? {}
              : { externalId: config.assumeRoleExternalId }),
          },
        }),
  });
  return createCloudMapClient(leaderOnly(createSdkCloudMapPort(sdk), leading), {
    logger: logger.child({ component: 'cloudmap' }),
    metrics: createCloudMapMetrics(registry),
    ...overrides,
  });
}
