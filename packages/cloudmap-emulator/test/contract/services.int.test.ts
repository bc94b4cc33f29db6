import {
  CreateServiceCommand,
  DeleteServiceCommand,
  GetServiceCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, privateDnsNamespace, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('services', (target) => {
  it('CreateService is synchronous and GetService returns the same service', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'svc-ns');
    const { Service } = await client.send(
      new CreateServiceCommand({ Name: 'web', NamespaceId: ns, Description: 'd' }),
    );
    expect(Service).toMatchObject({ Name: 'web', NamespaceId: ns, Description: 'd' });
    expect(Service?.Arn).toMatch(/:service\/srv-/);
    const got = await client.send(new GetServiceCommand({ Id: Service!.Id! }));
    expect(got.Service).toMatchObject({ Id: Service!.Id, Name: 'web', NamespaceId: ns });
  });

  it('GetService of an unknown ID answers ServiceNotFound', async () => {
    expect(
      (await failure(target().client.send(new GetServiceCommand({ Id: 'srv-unknown00000000' }))))
        .name,
    ).toBe('ServiceNotFound');
  });

  it('CreateService in an unknown namespace answers NamespaceNotFound', async () => {
    const create = target().client.send(
      new CreateServiceCommand({ Name: 'x', NamespaceId: 'ns-unknown0000000000' }),
    );
    await expectAws(
      target(),
      async () => expect((await failure(create)).name).toBe('NamespaceNotFound'),
      {
        name: 'create-service-unknown-namespace',
        moto: async () => expect((await create).Service?.Id).toBeTruthy(),
      },
    );
  });

  it('ListServices honours the NAMESPACE_ID filter', async () => {
    const { client } = target();
    const a = await httpNamespace(client, 'list-a');
    const b = await httpNamespace(client, 'list-b');
    await httpService(client, a, 'one');
    await httpService(client, b, 'two');
    const { Services } = await client.send(
      new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [a] }] }),
    );
    const names = (Services ?? []).map((s) => s.Name).sort();
    await expectAws(target(), async () => expect(names).toEqual(['one']), {
      name: 'list-services-ignores-filters',
      moto: async () => expect(names).toEqual(['one', 'two']),
    });
  });

  it('ListServices pages with MaxResults and NextToken', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'paged-svc');
    for (const n of ['s1', 's2', 's3']) await httpService(client, ns, n);
    const first = await client.send(new ListServicesCommand({ MaxResults: 2 }));
    await expectAws(
      target(),
      async () => {
        expect(first.Services).toHaveLength(2);
        const rest = await client.send(
          new ListServicesCommand({ MaxResults: 2, NextToken: first.NextToken }),
        );
        expect(rest.NextToken).toBeUndefined();
        expect([...first.Services!, ...rest.Services!].map((s) => s.Name).sort()).toEqual([
          's1',
          's2',
          's3',
        ]);
      },
      {
        name: 'list-services-no-pagination',
        moto: async () => {
          expect(first.Services).toHaveLength(3);
          expect(first.NextToken).toBeUndefined();
        },
      },
    );
  });

  it('UpdateService is an asynchronous UPDATE_SERVICE operation that changes the service', async () => {
    const { client } = target();
    const ns = await privateDnsNamespace(target().client, 'upd.local');
    const { Service } = await client.send(
      new CreateServiceCommand({
        Name: 'u',
        NamespaceId: ns,
        DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 10 }] },
      }),
    );
    const { OperationId } = await client.send(
      new UpdateServiceCommand({
        Id: Service!.Id,
        Service: { Description: 'new', DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 99 }] } },
      }),
    );
    expect(await waitForOperation(client, OperationId!)).toMatchObject({
      Type: 'UPDATE_SERVICE',
      Status: 'SUCCESS',
    });
    const got = (await client.send(new GetServiceCommand({ Id: Service!.Id }))).Service;
    expect(got?.Description).toBe('new');
    expect(got?.DnsConfig?.DnsRecords?.[0]?.TTL).toBe(99);
  });

  it('DeleteService with registered instances answers ResourceInUse', async () => {
    const { client } = target();
    const svc = await httpService(client, await httpNamespace(client, 'del-ns'), 'busy');
    const reg = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: {} }),
    );
    await waitForOperation(client, reg.OperationId!);
    const del = client.send(new DeleteServiceCommand({ Id: svc }));
    await expectAws(target(), async () => expect((await failure(del)).name).toBe('ResourceInUse'), {
      name: 'delete-service-in-use',
      moto: async () => expect((await del).$metadata.httpStatusCode).toBe(200),
    });
  });

  it('DeleteService of an unknown ID answers ServiceNotFound; of an empty service, deletes it', async () => {
    const { client } = target();
    const unknown = client.send(new DeleteServiceCommand({ Id: 'srv-unknown00000000' }));
    await expectAws(
      target(),
      async () => expect((await failure(unknown)).name).toBe('ServiceNotFound'),
      {
        name: 'delete-service-unknown',
        moto: async () => expect((await unknown).$metadata.httpStatusCode).toBe(200),
      },
    );
    const svc = await httpService(client, await httpNamespace(client, 'gone-ns'), 'gone');
    await client.send(new DeleteServiceCommand({ Id: svc }));
    expect((await failure(client.send(new GetServiceCommand({ Id: svc })))).name).toBe(
      'ServiceNotFound',
    );
  });
});
