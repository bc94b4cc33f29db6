import {
  CreateHttpNamespaceCommand,
  CreatePrivateDnsNamespaceCommand,
  CreateServiceCommand,
  GetOperationCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
  type Operation,
} from '@aws-sdk/client-servicediscovery';

/** An unmodified SDK client pointed at a local endpoint: the only settings a user needs. */
export function sdkClient(
  endpoint: string,
  extra: { maxAttempts?: number } = {},
): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    region: 'us-east-1',
    endpoint,
    disableHostPrefix: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: extra.maxAttempts ?? 1,
  });
}

/** Polls GetOperation until the operation is SUCCESS or FAIL. */
export async function waitForOperation(
  client: ServiceDiscoveryClient,
  operationId: string,
  timeoutMs = 10_000,
): Promise<Operation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Operation: op } = await client.send(
      new GetOperationCommand({ OperationId: operationId }),
    );
    if (op?.Status === 'SUCCESS' || op?.Status === 'FAIL') return op;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still ${op?.Status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** RegisterInstance, then the finished operation (SUCCESS or FAIL). */
export async function registerInstance(
  client: ServiceDiscoveryClient,
  ServiceId: string,
  InstanceId: string,
  Attributes: Record<string, string>,
): Promise<Operation> {
  const { OperationId } = await client.send(
    new RegisterInstanceCommand({ ServiceId, InstanceId, Attributes }),
  );
  return waitForOperation(client, OperationId!);
}

export async function httpNamespace(client: ServiceDiscoveryClient, name: string): Promise<string> {
  const { OperationId } = await client.send(new CreateHttpNamespaceCommand({ Name: name }));
  const op = await waitForOperation(client, OperationId!);
  if (op.Status !== 'SUCCESS') throw new Error(`namespace ${name}: ${op.ErrorMessage}`);
  return op.Targets!['NAMESPACE']!;
}

/** A private DNS namespace in a VPC of its own, so two never clash on the VPC. */
export async function privateDnsNamespace(
  client: ServiceDiscoveryClient,
  name: string,
): Promise<string> {
  const { OperationId } = await client.send(
    new CreatePrivateDnsNamespaceCommand({
      Name: name,
      Vpc: `vpc-${name.replace(/[^a-z0-9]/g, '')}`,
    }),
  );
  const op = await waitForOperation(client, OperationId!);
  if (op.Status !== 'SUCCESS') throw new Error(`namespace ${name}: ${op.ErrorMessage}`);
  return op.Targets!['NAMESPACE']!;
}

export async function httpService(
  client: ServiceDiscoveryClient,
  namespaceId: string,
  name: string,
): Promise<string> {
  const { Service } = await client.send(
    new CreateServiceCommand({ Name: name, NamespaceId: namespaceId }),
  );
  return Service!.Id!;
}
