import {
  DeregisterInstanceCommand,
  GetInstanceCommand,
  ListInstancesCommand,
  RegisterInstanceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, registerInstance, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('instances', (target) => {
  const service = async (name = 'inst') =>
    httpService(target().client, await httpNamespace(target().client, `${name}-ns`), name);

  it('RegisterInstance is an asynchronous REGISTER_INSTANCE operation targeting the instance', async () => {
    const svc = await service();
    const op = await registerInstance(target().client, svc, 'i-1', { color: 'red' });
    expect(op).toMatchObject({ Type: 'REGISTER_INSTANCE', Status: 'SUCCESS' });
    expect(op.Targets?.['INSTANCE']).toBe('i-1');
    await expectAws(target(), async () => expect(op.Targets?.['SERVICE']).toBe(svc), {
      name: 'operation-targets-instance-only',
      moto: async () => expect(op.Targets?.['SERVICE']).toBeUndefined(),
    });
    const { Instance } = await target().client.send(
      new GetInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }),
    );
    expect(Instance).toMatchObject({ Id: 'i-1', Attributes: { color: 'red' } });
  });

  it('RegisterInstance with an existing InstanceId replaces the instance', async () => {
    const svc = await service();
    await registerInstance(target().client, svc, 'i-1', { color: 'red', size: 'L' });
    await registerInstance(target().client, svc, 'i-1', { color: 'blue' });
    const { Instances } = await target().client.send(new ListInstancesCommand({ ServiceId: svc }));
    await expectAws(
      target(),
      async () =>
        expect(Instances).toEqual([
          expect.objectContaining({ Id: 'i-1', Attributes: { color: 'blue' } }),
        ]),
      {
        name: 'register-appends-duplicate',
        moto: async () => expect(Instances?.map((i) => i.Id)).toEqual(['i-1', 'i-1']),
      },
    );
  });

  it('RegisterInstance in an unknown service answers ServiceNotFound', async () => {
    const reg = target().client.send(
      new RegisterInstanceCommand({
        ServiceId: 'srv-unknown00000000',
        InstanceId: 'i',
        Attributes: {},
      }),
    );
    expect((await failure(reg)).name).toBe('ServiceNotFound');
  });

  it('DeregisterInstance removes the instance; deregistering an unknown one is InstanceNotFound', async () => {
    const { client } = target();
    const svc = await service();
    await registerInstance(target().client, svc, 'i-1', {});
    const { OperationId } = await client.send(
      new DeregisterInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }),
    );
    expect(await waitForOperation(client, OperationId!)).toMatchObject({
      Type: 'DEREGISTER_INSTANCE',
      Status: 'SUCCESS',
    });
    expect(
      (await failure(client.send(new GetInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }))))
        .name,
    ).toBe('InstanceNotFound');
    const again = client.send(new DeregisterInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }));
    expect((await failure(again)).name).toBe('InstanceNotFound');
  });

  it('ListInstances pages with MaxResults and NextToken', async () => {
    const { client } = target();
    const svc = await service();
    for (const id of ['a', 'b', 'c']) await registerInstance(target().client, svc, id, {});
    const first = await client.send(new ListInstancesCommand({ ServiceId: svc, MaxResults: 2 }));
    expect(first.Instances).toHaveLength(2);
    const rest = await client.send(
      new ListInstancesCommand({ ServiceId: svc, MaxResults: 2, NextToken: first.NextToken }),
    );
    expect(rest.NextToken).toBeUndefined();
    expect([...first.Instances!, ...rest.Instances!].map((i) => i.Id).sort()).toEqual([
      'a',
      'b',
      'c',
    ]);
  });
});
