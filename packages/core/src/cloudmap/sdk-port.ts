import {
  CreateHttpNamespaceCommand,
  CreatePrivateDnsNamespaceCommand,
  CreateServiceCommand,
  DeleteServiceCommand,
  DeregisterInstanceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  GetOperationCommand,
  RegisterInstanceCommand,
  paginateListInstances,
  paginateListNamespaces,
  paginateListServices,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import type {
  CallOptions,
  CloudMapInstance,
  CloudMapNamespace,
  CloudMapPort,
  CloudMapService,
  NamespaceType,
  OperationState,
  OperationStatus,
  Tags,
} from '../ports/cloudmap-port.js';
import { cloudMapLimits } from '../ports/cloudmap-limits.js';
import type { CloudMapOperationName } from '../ports/operations.js';
import { fromSdkDnsConfig, toSdkServiceSpec } from './sdk-dns-config.js';
import { toCloudMapError } from './sdk-errors.js';

const toTagList = (tags: Tags) => Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));

/** The SDK's per-call options: the caller's deadline as its abortSignal. */
const sendOptions = (options?: CallOptions): { abortSignal?: AbortSignal } =>
  options?.signal === undefined ? {} : { abortSignal: options.signal };

const required = (value: string | undefined, what: string, op: CloudMapOperationName): string => {
  if (value === undefined || value === '')
    throw toCloudMapError({ name: 'InvalidInput', message: `response without ${what}` }, op);
  return value;
};

/**
 * The CloudMapPort on the AWS SDK v3. It only translates: no retries (the SDK's maxAttempts
 * is 1, see `createServiceDiscoveryClient`), no caching, no limits; `createCloudMapClient`
 * adds those on top. Every SDK error leaves here as a CloudMapError. DiscoverInstances* go
 * through `data` (a separate client for a VPC endpoint's data host, `createServiceDiscoveryClients`).
 */
export function createSdkCloudMapPort(
  sd: ServiceDiscoveryClient,
  data: ServiceDiscoveryClient = sd,
): CloudMapPort {
  const call = async <T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw toCloudMapError(error, op);
    }
  };

  return {
    listNamespaces: (options) =>
      call('listNamespaces', async () => {
        const out: CloudMapNamespace[] = [];
        for await (const page of paginateListNamespaces({ client: sd }, {}, sendOptions(options))) {
          for (const ns of page.Namespaces ?? []) {
            out.push({
              id: required(ns.Id, 'namespace Id', 'listNamespaces'),
              name: required(ns.Name, 'namespace Name', 'listNamespaces'),
              type: (ns.Type ?? 'HTTP') as NamespaceType,
              ...(ns.Arn === undefined ? {} : { arn: ns.Arn }),
            });
          }
        }
        return out;
      }),
    createHttpNamespace: (name, tags, creatorRequestId, options) =>
      call('createHttpNamespace', async () => {
        const res = await sd.send(
          new CreateHttpNamespaceCommand({
            Name: name,
            Tags: toTagList(tags),
            ...(creatorRequestId === undefined ? {} : { CreatorRequestId: creatorRequestId }),
          }),
          sendOptions(options),
        );
        return { operationId: required(res.OperationId, 'OperationId', 'createHttpNamespace') };
      }),
    createPrivateDnsNamespace: (name, vpc, tags, creatorRequestId, options) =>
      call('createPrivateDnsNamespace', async () => {
        const res = await sd.send(
          new CreatePrivateDnsNamespaceCommand({
            Name: name,
            Vpc: vpc,
            Tags: toTagList(tags),
            ...(creatorRequestId === undefined ? {} : { CreatorRequestId: creatorRequestId }),
          }),
          sendOptions(options),
        );
        return {
          operationId: required(res.OperationId, 'OperationId', 'createPrivateDnsNamespace'),
        };
      }),
    listServices: (namespaceId, options) =>
      call('listServices', async () => {
        const out: CloudMapService[] = [];
        const filters = [
          { Name: 'NAMESPACE_ID' as const, Values: [namespaceId], Condition: 'EQ' as const },
        ];
        for await (const page of paginateListServices(
          { client: sd },
          { Filters: filters },
          sendOptions(options),
        )) {
          for (const s of page.Services ?? []) {
            // ServiceSummary has no NamespaceId; it is the one we filtered on.
            const dnsConfig = fromSdkDnsConfig(s.DnsConfig);
            out.push({
              id: required(s.Id, 'service Id', 'listServices'),
              name: required(s.Name, 'service Name', 'listServices'),
              namespaceId,
              ...(s.Arn === undefined ? {} : { arn: s.Arn }),
              ...(dnsConfig === undefined ? {} : { dnsConfig }),
              ...(s.HealthCheckCustomConfig === undefined ? {} : { customHealth: true }),
              ...(s.InstanceCount === undefined ? {} : { instanceCount: s.InstanceCount }),
            });
          }
        }
        return out;
      }),
    createService: (namespaceId, name, tags, creatorRequestId, spec, options) =>
      call('createService', async () => {
        const res = await sd.send(
          new CreateServiceCommand({
            Name: name,
            NamespaceId: namespaceId,
            Tags: toTagList(tags),
            ...(creatorRequestId === undefined ? {} : { CreatorRequestId: creatorRequestId }),
            ...toSdkServiceSpec(spec),
          }),
          sendOptions(options),
        );
        const s = res.Service;
        const dnsConfig = fromSdkDnsConfig(s?.DnsConfig);
        return {
          id: required(s?.Id, 'Service.Id', 'createService'),
          name: s?.Name ?? name,
          namespaceId: s?.NamespaceId ?? namespaceId,
          ...(s?.Arn === undefined ? {} : { arn: s.Arn }),
          ...(dnsConfig === undefined ? {} : { dnsConfig }),
          ...(s?.HealthCheckCustomConfig === undefined ? {} : { customHealth: true }),
        };
      }),
    deleteService: (serviceId, options) =>
      call('deleteService', async () => {
        await sd.send(new DeleteServiceCommand({ Id: serviceId }), sendOptions(options));
      }),
    listInstances: (serviceId, options) =>
      call('listInstances', async () => {
        const out: CloudMapInstance[] = [];
        for await (const page of paginateListInstances(
          { client: sd },
          { ServiceId: serviceId },
          sendOptions(options),
        )) {
          for (const i of page.Instances ?? [])
            out.push({
              id: required(i.Id, 'instance Id', 'listInstances'),
              attributes: { ...i.Attributes },
            });
        }
        return out;
      }),
    discoverInstances: (namespaceName, serviceName, queryParameters, options) =>
      call('discoverInstances', async () => {
        const res = await data.send(
          new DiscoverInstancesCommand({
            NamespaceName: namespaceName,
            ServiceName: serviceName,
            MaxResults: cloudMapLimits.discoverMaxResults,
            // The default is undocumented; ALL returns every instance, as the AWS controller does.
            HealthStatus: 'ALL',
            ...(queryParameters === undefined ? {} : { QueryParameters: queryParameters }),
          }),
          sendOptions(options),
        );
        return {
          instances: (res.Instances ?? []).map((i) => ({
            id: required(i.InstanceId, 'InstanceId', 'discoverInstances'),
            attributes: { ...i.Attributes },
            ...(i.HealthStatus === 'HEALTHY' ||
            i.HealthStatus === 'UNHEALTHY' ||
            i.HealthStatus === 'UNKNOWN'
              ? { health: i.HealthStatus }
              : {}),
          })),
          revision: res.InstancesRevision ?? 0,
        };
      }),
    discoverInstancesRevision: (namespaceName, serviceName, options) =>
      call('discoverInstancesRevision', async () => {
        const res = await data.send(
          new DiscoverInstancesRevisionCommand({
            NamespaceName: namespaceName,
            ServiceName: serviceName,
          }),
          sendOptions(options),
        );
        return res.InstancesRevision ?? 0;
      }),
    registerInstance: (serviceId, instanceId, attributes, options) =>
      call('registerInstance', async () => {
        const res = await sd.send(
          new RegisterInstanceCommand({
            ServiceId: serviceId,
            InstanceId: instanceId,
            Attributes: attributes,
          }),
          sendOptions(options),
        );
        return { operationId: required(res.OperationId, 'OperationId', 'registerInstance') };
      }),
    deregisterInstance: (serviceId, instanceId, options) =>
      call('deregisterInstance', async () => {
        const res = await sd.send(
          new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: instanceId }),
          sendOptions(options),
        );
        return { operationId: required(res.OperationId, 'OperationId', 'deregisterInstance') };
      }),
    getOperation: (operationId, options) =>
      call('getOperation', async () => {
        const res = await sd.send(
          new GetOperationCommand({ OperationId: operationId }),
          sendOptions(options),
        );
        const op = res.Operation;
        const state: OperationState = {
          operationId: op?.Id ?? operationId,
          status: (op?.Status ?? 'SUBMITTED') as OperationStatus,
        };
        if (op?.ErrorCode !== undefined) state.errorCode = op.ErrorCode;
        if (op?.ErrorMessage !== undefined) state.errorMessage = op.ErrorMessage;
        if (op?.Targets !== undefined) state.targets = { ...op.Targets };
        return state;
      }),
  };
}
