import {
  CreateHttpNamespaceCommand,
  CreatePrivateDnsNamespaceCommand,
  DeleteNamespaceCommand,
  GetNamespaceCommand,
  GetOperationCommand,
  ListNamespacesCommand,
  type NamespaceSummary,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('namespaces', (target) => {
  it('CreateHttpNamespace is asynchronous: an operation whose target is the new namespace', async () => {
    const { client } = target();
    const { OperationId } = await client.send(new CreateHttpNamespaceCommand({ Name: 'async-ns' }));
    const first = (await client.send(new GetOperationCommand({ OperationId }))).Operation!;
    expect(first.Type).toBe('CREATE_NAMESPACE');
    await expectAws(
      target(),
      async () => expect(['SUBMITTED', 'PENDING']).toContain(first.Status),
      {
        name: 'operations-finish-instantly',
        moto: async () => expect(first.Status).toBe('SUCCESS'),
      },
    );
    const done = await waitForOperation(client, OperationId!);
    expect(done.Status).toBe('SUCCESS');
    const id = done.Targets!['NAMESPACE']!;
    const { Namespace } = await client.send(new GetNamespaceCommand({ Id: id }));
    expect(Namespace).toMatchObject({ Id: id, Name: 'async-ns', Type: 'HTTP' });
    await expectAws(target(), async () => expect(Namespace?.ServiceCount).toBe(0), {
      name: 'namespace-no-service-count',
      moto: async () => expect(Namespace?.ServiceCount).toBeUndefined(),
    });
    expect(Namespace?.Properties?.HttpProperties?.HttpName).toBe('async-ns');
    expect(Namespace?.Arn).toMatch(/^arn:aws:servicediscovery:us-east-1:\d{12}:namespace\/ns-/);
    expect(Namespace?.CreateDate).toBeInstanceOf(Date);
  });

  it('GetNamespace of an unknown ID answers NamespaceNotFound with HTTP 400', async () => {
    const err = await failure(
      target().client.send(new GetNamespaceCommand({ Id: 'ns-doesnotexist0000' })),
    );
    expect(err).toMatchObject({ name: 'NamespaceNotFound', status: 400 });
  });

  it('a second HTTP namespace with the same name is NamespaceAlreadyExists naming the first', async () => {
    const { client } = target();
    const first = await httpNamespace(client, 'dup-ns');
    const second = client.send(
      new CreateHttpNamespaceCommand({ Name: 'dup-ns', CreatorRequestId: 'other' }),
    );
    await expectAws(
      target(),
      async () => {
        const err = await failure(second);
        expect(err.name).toBe('NamespaceAlreadyExists');
        expect(err.error).toMatchObject({ NamespaceId: first });
      },
      {
        name: 'no-namespace-already-exists',
        moto: async () => {
          await waitForOperation(client, (await second).OperationId!);
          const all = (await client.send(new ListNamespacesCommand({}))).Namespaces ?? [];
          expect(all.filter((n) => n.Name === 'dup-ns')).toHaveLength(2);
        },
      },
    );
  });

  it('repeating CreateHttpNamespace with the same CreatorRequestId answers the first operation', async () => {
    const { client } = target();
    const input = { Name: 'idem-ns', CreatorRequestId: 'token-1' };
    const a = await client.send(new CreateHttpNamespaceCommand(input));
    await waitForOperation(client, a.OperationId!);
    const retry = client.send(new CreateHttpNamespaceCommand(input));
    await expectAws(target(), async () => expect((await retry).OperationId).toBe(a.OperationId), {
      name: 'no-creator-request-id-idempotency',
      moto: async () => expect((await retry).OperationId).not.toBe(a.OperationId),
    });
  });

  it('ListNamespaces honours TYPE and NAME BEGINS_WITH filters', async () => {
    const { client } = target();
    await httpNamespace(client, 'team-a');
    await httpNamespace(client, 'team-b');
    await httpNamespace(client, 'other');
    const { OperationId } = await client.send(
      new CreatePrivateDnsNamespaceCommand({ Name: 'team.internal', Vpc: 'vpc-0123456789' }),
    );
    await waitForOperation(client, OperationId!);
    const list = async (
      Filters: { Name: 'TYPE' | 'NAME'; Values: string[]; Condition?: 'EQ' | 'BEGINS_WITH' }[],
    ) =>
      ((await client.send(new ListNamespacesCommand({ Filters }))).Namespaces ?? [])
        .map((n) => n.Name)
        .sort();
    const byPrefix = await list([{ Name: 'NAME', Values: ['team-'], Condition: 'BEGINS_WITH' }]);
    const dns = await list([{ Name: 'TYPE', Values: ['DNS_PRIVATE'] }]);
    await expectAws(
      target(),
      async () => {
        expect(byPrefix).toEqual(['team-a', 'team-b']);
        expect(dns).toEqual(['team.internal']);
      },
      {
        name: 'list-namespaces-ignores-filters',
        moto: async () => expect(byPrefix).toEqual(['other', 'team-a', 'team-b', 'team.internal']),
      },
    );
  });

  it('ListNamespaces pages with MaxResults and NextToken, each namespace exactly once', async () => {
    const { client } = target();
    for (let i = 0; i < 5; i++) await httpNamespace(client, `page-${i}`);
    const seen: NamespaceSummary[] = [];
    let pages = 0;
    let NextToken: string | undefined;
    do {
      const page = await client.send(new ListNamespacesCommand({ MaxResults: 2, NextToken }));
      seen.push(...(page.Namespaces ?? []));
      NextToken = page.NextToken;
      pages += 1;
    } while (NextToken && pages < 10);
    expect(seen.map((n) => n.Name).sort()).toEqual([
      'page-0',
      'page-1',
      'page-2',
      'page-3',
      'page-4',
    ]);
    await expectAws(target(), async () => expect(pages).toBe(3), {
      name: 'list-namespaces-no-pagination',
      moto: async () => expect(pages).toBe(1),
    });
  });

  it('DeleteNamespace with services still in it answers ResourceInUse', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'busy-ns');
    await httpService(client, ns, 'svc');
    const del = client.send(new DeleteNamespaceCommand({ Id: ns }));
    await expectAws(target(), async () => expect((await failure(del)).name).toBe('ResourceInUse'), {
      name: 'delete-namespace-in-use',
      moto: async () =>
        expect((await waitForOperation(client, (await del).OperationId!)).Status).toBe('SUCCESS'),
    });
  });

  it('DeleteNamespace is asynchronous and the namespace is gone once it succeeds', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'doomed-ns');
    const { OperationId } = await client.send(new DeleteNamespaceCommand({ Id: ns }));
    const done = await waitForOperation(client, OperationId!);
    expect(done).toMatchObject({ Type: 'DELETE_NAMESPACE', Status: 'SUCCESS' });
    expect((await failure(client.send(new GetNamespaceCommand({ Id: ns })))).name).toBe(
      'NamespaceNotFound',
    );
  });

  it('CreatePrivateDnsNamespace gives a DNS_PRIVATE namespace with a hosted zone', async () => {
    const { client } = target();
    const { OperationId } = await client.send(
      new CreatePrivateDnsNamespaceCommand({
        Name: 'corp.local',
        Vpc: 'vpc-0abc',
        Properties: { DnsProperties: { SOA: { TTL: 60 } } },
      }),
    );
    const id = (await waitForOperation(client, OperationId!)).Targets!['NAMESPACE']!;
    const { Namespace } = await client.send(new GetNamespaceCommand({ Id: id }));
    expect(Namespace?.Type).toBe('DNS_PRIVATE');
    const zone = Namespace?.Properties?.DnsProperties?.HostedZoneId;
    await expectAws(target(), async () => expect(zone).toMatch(/^Z[A-Z0-9]+$/), {
      name: 'hosted-zone-id-path',
      moto: async () => expect(zone).toMatch(/^\/hostedzone\/[A-Z0-9]+$/),
    });
  });

  it('the 51st namespace answers ResourceLimitExceeded', async () => {
    const { client } = target();
    for (let i = 0; i < 50; i++)
      await client.send(new CreateHttpNamespaceCommand({ Name: `quota-${i}` }));
    const over = client.send(new CreateHttpNamespaceCommand({ Name: 'quota-50' }));
    await expectAws(
      target(),
      async () => expect((await failure(over)).name).toBe('ResourceLimitExceeded'),
      {
        name: 'no-namespace-quota',
        moto: async () => expect((await over).OperationId).toBeTruthy(),
      },
    );
  });

  it('a namespace name with a space or an arn: prefix is InvalidInput', async () => {
    const { client } = target();
    const spaced = client.send(new CreateHttpNamespaceCommand({ Name: 'has space' }));
    const arnish = client.send(new CreateHttpNamespaceCommand({ Name: 'arn:thing' }));
    await expectAws(
      target(),
      async () => {
        expect((await failure(spaced)).name).toBe('InvalidInput');
        expect((await failure(arnish)).name).toBe('InvalidInput');
      },
      {
        name: 'namespace-name-not-validated',
        moto: async () => {
          expect((await spaced).OperationId).toBeTruthy();
          expect((await arnish).OperationId).toBeTruthy();
        },
      },
    );
  });
});
