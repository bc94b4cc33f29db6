import type { CloudMapInstance, CloudMapPort } from '@cloudmap-mcs/core';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';

/** A plain SDK-backed port (no cache) for the test to read what the agent wrote. */
export function cloudMapReader(env: Readonly<Record<string, string>>): CloudMapPort {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'] ?? 'test';
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'] ?? 'test';
  const endpoint = env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  return createSdkCloudMapPort(
    createServiceDiscoveryClient({
      region: env['AWS_REGION'] ?? 'us-east-1',
      ...(endpoint === undefined ? {} : { endpoint }),
      credentials: async () => ({ accessKeyId, secretAccessKey }),
    }),
  );
}

/** Instances of N/S with these attributes, [] when the service does not exist. */
export async function instancesOf(
  port: CloudMapPort,
  namespace: string,
  service: string,
  query: Record<string, string>,
): Promise<CloudMapInstance[]> {
  try {
    const { instances } = await port.discoverInstances(namespace, service, query);
    // The records only: DiscoverInstances' HealthStatus (CloudMapInstance.health) is not part of them.
    return instances
      .map(({ id, attributes }) => ({ id, attributes }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  } catch (error) {
    if (
      (error as { code?: string }).code === 'ServiceNotFound' ||
      (error as { code?: string }).code === 'NamespaceNotFound'
    )
      return [];
    throw error;
  }
}
