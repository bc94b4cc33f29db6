import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DeregisterInstanceCommand,
  GetOperationCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
  UpdateInstanceCustomHealthStatusCommand,
} from '@aws-sdk/client-servicediscovery';
import { waitFor } from './wait.js';

/**
 * A non-Kubernetes writer of Cloud Map, as an ECS service with service discovery is: an HTTP
 * namespace, a service with HealthCheckCustomConfig, and task instances carrying
 * AWS_INSTANCE_IPV4, AWS_INSTANCE_PORT, AVAILABILITY_ZONE and ECS's own attributes, their
 * health set with UpdateInstanceCustomHealthStatus. Straight AWS SDK calls on the wire, so
 * tests and the demo exercise the import of non-Kubernetes services (ADR 0014) the way it
 * happens on AWS.
 */

export interface EcsTask {
  id: string;
  /** The task's address: one of the two (ECS registers AWS_INSTANCE_IPV4 or _IPV6). */
  ipv4?: string;
  ipv6?: string;
  port: number;
  healthy: boolean;
  zone?: string;
  /** Extra custom attributes (e.g. a version to select with queryParameters). */
  attributes?: Record<string, string>;
}

export interface EcsLikeService {
  readonly namespace: string;
  readonly service: string;
  readonly serviceId: string;
  register(task: EcsTask): Promise<void>;
  deregister(id: string): Promise<void>;
  setHealth(id: string, healthy: boolean): Promise<void>;
  close(): void;
}

/** A client of the emulator from the harness environment (cloudMapEnv). */
export function sdkFromEnv(env: Readonly<Record<string, string>>): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    endpoint: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '',
    region: env['AWS_REGION'] ?? 'us-east-1',
    credentials: {
      accessKeyId: env['AWS_ACCESS_KEY_ID'] ?? 'test',
      secretAccessKey: env['AWS_SECRET_ACCESS_KEY'] ?? 'test',
    },
    // DiscoverInstances' data- host prefix does not resolve on a local endpoint.
    disableHostPrefix: true,
  });
}

async function settled(sd: ServiceDiscoveryClient, operationId: string | undefined): Promise<void> {
  if (operationId === undefined) throw new Error('no OperationId');
  await waitFor(`operation ${operationId}`, async () => {
    const { Operation } = await sd.send(new GetOperationCommand({ OperationId: operationId }));
    if (Operation?.Status === 'FAIL')
      throw new Error(`operation failed: ${Operation.ErrorMessage ?? ''}`);
    return Operation?.Status === 'SUCCESS';
  });
}

/** Creates (or finds) the namespace and the service; registers nothing yet. */
export async function ecsLikeService(
  env: Readonly<Record<string, string>>,
  namespace: string,
  service: string,
): Promise<EcsLikeService> {
  const sd = sdkFromEnv(env);
  const findNs = async () =>
    (await sd.send(new ListNamespacesCommand({}))).Namespaces?.find((n) => n.Name === namespace);
  let ns = await findNs();
  if (ns === undefined) {
    const out = await sd.send(new CreateHttpNamespaceCommand({ Name: namespace }));
    await settled(sd, out.OperationId);
    ns = await findNs();
  }
  if (ns?.Id === undefined) throw new Error(`namespace ${namespace} not created`);
  const existing = (
    await sd.send(new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [ns.Id] }] }))
  ).Services?.find((s) => s.Name === service);
  const serviceId =
    existing?.Id ??
    (
      await sd.send(
        new CreateServiceCommand({
          Name: service,
          NamespaceId: ns.Id,
          // ECS service discovery: the task's health comes from ECS, a custom health check.
          HealthCheckCustomConfig: {},
        }),
      )
    ).Service?.Id;
  if (serviceId === undefined) throw new Error(`service ${service} not created`);
  return {
    namespace,
    service,
    serviceId,
    async register(task) {
      const out = await sd.send(
        new RegisterInstanceCommand({
          ServiceId: serviceId,
          InstanceId: task.id,
          Attributes: {
            ...(task.ipv4 === undefined ? {} : { AWS_INSTANCE_IPV4: task.ipv4 }),
            ...(task.ipv6 === undefined ? {} : { AWS_INSTANCE_IPV6: task.ipv6 }),
            AWS_INSTANCE_PORT: String(task.port),
            AWS_INIT_HEALTH_STATUS: task.healthy ? 'HEALTHY' : 'UNHEALTHY',
            ECS_CLUSTER_NAME: 'demo',
            ECS_SERVICE_NAME: service,
            ...(task.zone === undefined ? {} : { AVAILABILITY_ZONE: task.zone }),
            ...task.attributes,
          },
        }),
      );
      await settled(sd, out.OperationId);
    },
    async deregister(id) {
      const out = await sd.send(
        new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: id }),
      );
      await settled(sd, out.OperationId);
    },
    async setHealth(id, healthy) {
      await sd.send(
        new UpdateInstanceCustomHealthStatusCommand({
          ServiceId: serviceId,
          InstanceId: id,
          Status: healthy ? 'HEALTHY' : 'UNHEALTHY',
        }),
      );
    },
    close: () => sd.destroy(),
  };
}
