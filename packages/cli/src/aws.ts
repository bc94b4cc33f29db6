/** Cloud Map clients for the commands: with the operator's credentials, or as an agent's role. */
import {
  createAssumeRoleCredentials,
  createCloudMapClient,
  createSdkCloudMapPort,
  createServiceDiscoveryClients,
  type CredentialsProvider,
} from '@cloudmap-mcs/core/cloudmap';
import type { CloudMapAccess } from './commands.js';

export interface AwsArgs {
  region: string | undefined;
  cloudmapEndpoint: string | undefined;
  /** $AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA: DiscoverInstances' host (a VPC endpoint without private DNS). */
  cloudmapDataEndpoint?: string | undefined;
}

export interface OpenAccess {
  access: CloudMapAccess;
  close: () => Promise<void>;
}

/** Cloud Map through the core client (retries, rate limits), caches off: one read per call. */
export function openCloudMap(
  args: AwsArgs,
  credentials?: CredentialsProvider,
): OpenAccess | undefined {
  const endpoint = args.cloudmapEndpoint;
  const region = args.region ?? (endpoint === undefined ? undefined : 'us-east-1');
  if (region === undefined) return undefined;
  const dataEndpoint = args.cloudmapDataEndpoint;
  const sdk = createServiceDiscoveryClients({
    region,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(dataEndpoint === undefined || dataEndpoint === '' ? {} : { dataEndpoint }),
    ...(credentials === undefined ? {} : { credentials }),
  });
  const client = createCloudMapClient(createSdkCloudMapPort(sdk.control, sdk.data), {
    retry: { maxAttempts: 3 },
    cacheTtlMs: { namespaces: 0, services: 0, instances: 0, discover: 0 },
  });
  return {
    access: { port: client, endpoint: endpoint ?? `AWS Cloud Map in ${region}` },
    close: () =>
      client.close().finally(() => {
        sdk.control.destroy();
        sdk.data.destroy();
      }),
  };
}

/**
 * Cloud Map as `roleArn`, assumed with the operator's credentials (STS AssumeRole); rejects
 * when the role cannot be assumed. Every client opened is closed by `closeAll`.
 */
export function roleOpener(args: AwsArgs) {
  const opened: OpenAccess[] = [];
  return {
    async actAs(role: { roleArn: string; externalId?: string }): Promise<CloudMapAccess> {
      const credentials = createAssumeRoleCredentials({
        roleArn: role.roleArn,
        sessionName: 'cloudmap-mcs-doctor',
        durationSeconds: 900,
        ...(role.externalId === undefined ? {} : { externalId: role.externalId }),
        ...(args.region === undefined ? {} : { region: args.region }),
      });
      await credentials(); // fails here, named, when the role does not trust the operator
      const open = openCloudMap(args, credentials);
      if (open === undefined) throw new Error('no AWS region');
      opened.push(open);
      return { ...open.access, endpoint: `${open.access.endpoint} as ${role.roleArn}` };
    },
    closeAll: () => Promise.all(opened.map((o) => o.close())).then(() => undefined),
  };
}
