import {
  CreatePrivateDnsNamespaceCommand,
  CreateServiceCommand,
  GetInstanceCommand,
  GetOperationCommand,
  RegisterInstanceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, registerInstance, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('instance rules', (target) => {
  const service = async (name = 'inst') =>
    httpService(target().client, await httpNamespace(target().client, `${name}-ns`), name);

  it('attribute limits: 30 custom attributes, 1,024-character values, 255-character keys, 5,000 in total', async () => {
    const { client } = target();
    const svc = await service();
    const custom = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    // 30 custom attributes plus reserved keys are fine.
    expect(
      (
        await registerInstance(target().client, svc, 'ok', {
          ...custom(30),
          AWS_INSTANCE_IPV4: '10.0.0.1',
          AWS_INSTANCE_PORT: '80',
        })
      ).Status,
    ).toBe('SUCCESS');
    const attempts = [
      custom(31),
      { k: 'x'.repeat(1025) },
      { ['k'.repeat(256)]: 'v' },
      Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`big${i}`, 'y'.repeat(1000)])),
    ].map((Attributes, i) =>
      client.send(
        new RegisterInstanceCommand({ ServiceId: svc, InstanceId: `bad-${i}`, Attributes }),
      ),
    );
    await expectAws(
      target(),
      async () => {
        for (const a of attempts) expect((await failure(a)).name).toBe('InvalidInput');
      },
      {
        name: 'attributes-not-validated',
        moto: async () => {
          for (const a of attempts) expect((await a).OperationId).toBeTruthy();
        },
      },
    );
  });

  it('instances of DNS services need the address attributes their records need', async () => {
    const { client } = target();
    const { OperationId } = await client.send(
      new CreatePrivateDnsNamespaceCommand({ Name: 'addr.local', Vpc: 'vpc-addr' }),
    );
    const ns = (await waitForOperation(client, OperationId!)).Targets!['NAMESPACE']!;
    const create = async (Name: string, Type: 'A' | 'SRV') =>
      (
        await client.send(
          new CreateServiceCommand({
            Name,
            NamespaceId: ns,
            DnsConfig: { DnsRecords: [{ Type, TTL: 5 }] },
          }),
        )
      ).Service!.Id!;
    const a = await create('a-svc', 'A');
    const srv = await create('srv-svc', 'SRV');
    const noIp = client.send(
      new RegisterInstanceCommand({ ServiceId: a, InstanceId: 'x', Attributes: { foo: 'bar' } }),
    );
    const noPort = client.send(
      new RegisterInstanceCommand({
        ServiceId: srv,
        InstanceId: 'y',
        Attributes: { AWS_INSTANCE_IPV4: '10.0.0.2' },
      }),
    );
    await expectAws(
      target(),
      async () => {
        expect((await failure(noIp)).name).toBe('InvalidInput');
        expect((await failure(noPort)).name).toBe('InvalidInput');
      },
      {
        name: 'dns-attributes-not-required',
        moto: async () => {
          expect((await noIp).OperationId).toBeTruthy();
          expect((await noPort).OperationId).toBeTruthy();
        },
      },
    );
    expect(
      (await registerInstance(target().client, a, 'z', { AWS_INSTANCE_IPV4: '10.0.0.3' })).Status,
    ).toBe('SUCCESS');
    expect(
      (
        await registerInstance(target().client, srv, 'w', {
          AWS_INSTANCE_IPV4: '10.0.0.4',
          AWS_INSTANCE_PORT: '8080',
        })
      ).Status,
    ).toBe('SUCCESS');
  });

  it('a second registration of an instance while the first is running answers DuplicateRequest', async () => {
    const { client } = target();
    const svc = await service();
    const first = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: { v: '1' } }),
    );
    const second = client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: { v: '2' } }),
    );
    await expectAws(
      target(),
      async () => {
        const err = await failure(second);
        expect(err.name).toBe('DuplicateRequest');
        expect(err.error).toMatchObject({ DuplicateOperationId: first.OperationId });
      },
      {
        name: 'no-duplicate-request',
        moto: async () => expect((await second).OperationId).toBeTruthy(),
      },
    );
  });

  it('repeating RegisterInstance with the same CreatorRequestId answers the first operation', async () => {
    const { client } = target();
    const svc = await service();
    const input = {
      ServiceId: svc,
      InstanceId: 'i',
      CreatorRequestId: 'reg-token',
      Attributes: { a: 'b' },
    };
    const first = await client.send(new RegisterInstanceCommand(input));
    await waitForOperation(client, first.OperationId!);
    const retry = client.send(new RegisterInstanceCommand(input));
    await expectAws(
      target(),
      async () => expect((await retry).OperationId).toBe(first.OperationId),
      {
        name: 'no-creator-request-id-idempotency',
        moto: async () => expect((await retry).OperationId).not.toBe(first.OperationId),
      },
    );
    const { Instance } = await client.send(
      new GetInstanceCommand({ ServiceId: svc, InstanceId: 'i' }),
    );
    expect(Instance?.CreatorRequestId).toBe('reg-token');
  });

  it('the 1,001st instance of a service answers ResourceLimitExceeded', async () => {
    const { client } = target();
    const svc = await service('big');
    const ids = Array.from({ length: 1000 }, (_, i) => `i-${i}`);
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids
          .slice(i, i + 25)
          .map((InstanceId) =>
            client.send(
              new RegisterInstanceCommand({ ServiceId: svc, InstanceId, Attributes: {} }),
            ),
          ),
      );
    }
    const over = client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i-1000', Attributes: {} }),
    );
    await expectAws(
      target(),
      async () => expect((await failure(over)).name).toBe('ResourceLimitExceeded'),
      {
        name: 'no-instance-quota',
        moto: async () => {
          const op = (
            await client.send(new GetOperationCommand({ OperationId: (await over).OperationId }))
          ).Operation;
          expect(op?.Status).toBe('SUCCESS');
        },
      },
    );
  });
});
