import {
  CreateServiceCommand,
  GetInstancesHealthStatusCommand,
  GetNamespaceCommand,
  RegisterInstanceCommand,
  UpdateHttpNamespaceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import {
  httpNamespace,
  httpService,
  privateDnsNamespace,
  registerInstance,
  waitForOperation,
} from '../sdk.js';
import { contractSuite, expectAws } from './harness.js';

contractSuite('health status and namespace updates', (target) => {
  it('UpdateHttpNamespace is an UPDATE_NAMESPACE operation that changes the description', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'updatable');
    const out = await client.send(
      new UpdateHttpNamespaceCommand({ Id: ns, Namespace: { Description: 'now described' } }),
    );
    await expectAws(
      target(),
      async () => {
        const op = await waitForOperation(client, out.OperationId!);
        expect(op).toMatchObject({ Type: 'UPDATE_NAMESPACE', Status: 'SUCCESS' });
        const { Namespace } = await client.send(new GetNamespaceCommand({ Id: ns }));
        expect(Namespace?.Description).toBe('now described');
      },
      // moto answers {"operationId": ...}: the SDK, reading OperationId, gets nothing.
      {
        name: 'update-namespace-lowercase-operation-id',
        moto: async () => expect(out.OperationId).toBeUndefined(),
      },
    );
  });

  it('GetInstancesHealthStatus: UNKNOWN without a health check, the custom status with one', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'health');
    const plain = await httpService(client, ns, 'plain');
    const { Service } = await client.send(
      new CreateServiceCommand({ Name: 'custom', NamespaceId: ns, HealthCheckCustomConfig: {} }),
    );
    for (const [ServiceId, InstanceId, Attributes] of [
      [plain, 'p', {}],
      [Service!.Id!, 'c', { AWS_INIT_HEALTH_STATUS: 'UNHEALTHY' }],
    ] as const) {
      const { OperationId } = await client.send(
        new RegisterInstanceCommand({ ServiceId, InstanceId, Attributes }),
      );
      await waitForOperation(client, OperationId!);
    }
    const plainStatus = (
      await client.send(new GetInstancesHealthStatusCommand({ ServiceId: plain }))
    ).Status;
    const customStatus = (
      await client.send(new GetInstancesHealthStatusCommand({ ServiceId: Service!.Id }))
    ).Status;
    await expectAws(
      target(),
      async () => {
        expect(plainStatus).toEqual({ p: 'UNKNOWN' });
        expect(customStatus).toEqual({ c: 'UNHEALTHY' });
      },
      {
        name: 'health-status-always-healthy',
        moto: async () => {
          expect(plainStatus).toEqual({ p: 'HEALTHY' });
          expect(customStatus).toEqual({ c: 'HEALTHY' });
        },
      },
    );
  });

  it('re-registering an instance sets its custom health from the new AWS_INIT_HEALTH_STATUS', async () => {
    // What the export agent relies on in DNS namespaces (ADR 0010): a readiness change
    // re-registers the endpoint, and that recreates its health status.
    const { client } = target();
    const ns = await privateDnsNamespace(client, 'rehealth.local');
    const { Service } = await client.send(
      new CreateServiceCommand({
        Name: 'web',
        NamespaceId: ns,
        DnsConfig: { RoutingPolicy: 'MULTIVALUE', DnsRecords: [{ Type: 'A', TTL: 5 }] },
        HealthCheckCustomConfig: {},
      }),
    );
    const statusAfter = async (init: 'HEALTHY' | 'UNHEALTHY') => {
      await registerInstance(client, Service!.Id!, 'i-1', {
        AWS_INSTANCE_IPV4: '10.0.0.1',
        AWS_INIT_HEALTH_STATUS: init,
      });
      return (await client.send(new GetInstancesHealthStatusCommand({ ServiceId: Service!.Id })))
        .Status;
    };
    const first = await statusAfter('HEALTHY');
    const second = await statusAfter('UNHEALTHY');
    const third = await statusAfter('HEALTHY');
    await expectAws(
      target(),
      async () =>
        expect([first, second, third]).toEqual([
          { 'i-1': 'HEALTHY' },
          { 'i-1': 'UNHEALTHY' },
          { 'i-1': 'HEALTHY' },
        ]),
      {
        name: 'health-status-always-healthy',
        moto: async () =>
          expect([second, third].map((s) => s?.['i-1'])).toEqual(['HEALTHY', 'HEALTHY']),
      },
    );
  });
});
