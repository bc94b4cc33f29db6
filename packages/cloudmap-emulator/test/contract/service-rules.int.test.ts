import {
  CreateServiceCommand,
  GetServiceCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, privateDnsNamespace, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('service rules', (target) => {
  it('a second service with the same name answers ServiceAlreadyExists naming the first', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'dup-svc-ns');
    const first = await httpService(client, ns, 'api');
    const again = client.send(
      new CreateServiceCommand({ Name: 'api', NamespaceId: ns, CreatorRequestId: 'someone-else' }),
    );
    await expectAws(
      target(),
      async () => {
        const err = await failure(again);
        expect(err.name).toBe('ServiceAlreadyExists');
        expect(err.error).toMatchObject({ ServiceId: first });
      },
      {
        name: 'no-service-already-exists',
        moto: async () => expect((await again).Service?.Id).not.toBe(first),
      },
    );
  });

  it('repeating CreateService with the same CreatorRequestId answers the same service', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'idem-svc-ns');
    const input = { Name: 'api', NamespaceId: ns, CreatorRequestId: 'svc-token' };
    const a = await client.send(new CreateServiceCommand(input));
    const b = client.send(new CreateServiceCommand(input));
    await expectAws(target(), async () => expect((await b).Service?.Id).toBe(a.Service?.Id), {
      name: 'no-creator-request-id-idempotency',
      moto: async () => expect((await b).Service?.Id).not.toBe(a.Service?.Id),
    });
  });

  it('DnsConfig is refused in an HTTP namespace, and record rules apply in DNS namespaces', async () => {
    const { client } = target();
    const http = await httpNamespace(client, 'plain-ns');
    const dns = await privateDnsNamespace(target().client, 'rules.local');
    const records = (...types: ('A' | 'AAAA' | 'SRV' | 'CNAME')[]) =>
      types.map((Type) => ({ Type, TTL: 10 }));
    const attempts = [
      client.send(
        new CreateServiceCommand({
          Name: 'a',
          NamespaceId: http,
          DnsConfig: { DnsRecords: records('A') },
        }),
      ),
      client.send(
        new CreateServiceCommand({
          Name: 'b',
          NamespaceId: dns,
          DnsConfig: { DnsRecords: records('A', 'CNAME'), RoutingPolicy: 'WEIGHTED' },
        }),
      ),
      client.send(
        new CreateServiceCommand({
          Name: 'c',
          NamespaceId: dns,
          DnsConfig: { DnsRecords: records('CNAME') },
        }),
      ),
      client.send(
        new CreateServiceCommand({
          Name: 'd',
          NamespaceId: dns,
          DnsConfig: { DnsRecords: records('SRV', 'SRV') },
        }),
      ),
    ];
    await expectAws(
      target(),
      async () => {
        for (const a of attempts) expect((await failure(a)).name).toBe('InvalidInput');
      },
      {
        name: 'service-dns-config-not-validated',
        moto: async () => {
          for (const a of attempts) expect((await a).Service?.Id).toBeTruthy();
        },
      },
    );
    const ok = await client.send(
      new CreateServiceCommand({
        Name: 'ok',
        NamespaceId: dns,
        DnsConfig: { DnsRecords: records('A', 'AAAA') },
      }),
    );
    expect(ok.Service?.DnsConfig?.DnsRecords?.map((r) => r.Type)).toEqual(['A', 'AAAA']);
    // One A, one AAAA and one SRV in any combination (Route 53 auto naming reference; the
    // record set ECS service discovery uses): ADR 0010.
    const srv = await client.send(
      new CreateServiceCommand({
        Name: 'with-srv',
        NamespaceId: dns,
        DnsConfig: { RoutingPolicy: 'MULTIVALUE', DnsRecords: records('A', 'SRV') },
        HealthCheckCustomConfig: {},
      }),
    );
    const { Service } = await client.send(new GetServiceCommand({ Id: srv.Service!.Id! }));
    expect(Service?.DnsConfig?.RoutingPolicy).toBe('MULTIVALUE');
    expect(Service?.DnsConfig?.DnsRecords).toEqual([
      { Type: 'A', TTL: 10 },
      { Type: 'SRV', TTL: 10 },
    ]);
    expect(Service?.HealthCheckCustomConfig).toBeDefined();
  });

  it('HealthCheckConfig and HealthCheckCustomConfig together are InvalidInput', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'hc-ns');
    const both = client.send(
      new CreateServiceCommand({
        Name: 'both',
        NamespaceId: ns,
        HealthCheckConfig: { Type: 'HTTP', ResourcePath: '/' },
        HealthCheckCustomConfig: {},
      }),
    );
    await expectAws(target(), async () => expect((await failure(both)).name).toBe('InvalidInput'), {
      name: 'service-dns-config-not-validated',
      moto: async () => expect((await both).Service?.Id).toBeTruthy(),
    });
  });

  it('a Route 53 health check in a private DNS namespace is InvalidInput; a custom one is fine', async () => {
    const { client } = target();
    const dns = await privateDnsNamespace(client, 'hc-private.local');
    const withRoute53Check = client.send(
      new CreateServiceCommand({
        Name: 'r53',
        NamespaceId: dns,
        DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 10 }] },
        HealthCheckConfig: { Type: 'HTTP', ResourcePath: '/health' },
      }),
    );
    await expectAws(
      target(),
      async () => expect((await failure(withRoute53Check)).name).toBe('InvalidInput'),
      {
        name: 'service-dns-config-not-validated',
        moto: async () => expect((await withRoute53Check).Service?.Id).toBeTruthy(),
      },
    );
    const custom = await client.send(
      new CreateServiceCommand({
        Name: 'custom',
        NamespaceId: dns,
        DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 10 }] },
        HealthCheckCustomConfig: {},
      }),
    );
    expect(custom.Service?.HealthCheckCustomConfig).toBeDefined();
  });

  it('UpdateService changes the TTL of the DNS records, never their types', async () => {
    const { client } = target();
    const dns = await privateDnsNamespace(client, 'ttl.local');
    const { Service } = await client.send(
      new CreateServiceCommand({
        Name: 'web',
        NamespaceId: dns,
        DnsConfig: { RoutingPolicy: 'MULTIVALUE', DnsRecords: [{ Type: 'A', TTL: 10 }] },
      }),
    );
    const Id = Service!.Id!;
    const ttl = await client.send(
      new UpdateServiceCommand({
        Id,
        Service: { DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 300 }] } },
      }),
    );
    await waitForOperation(client, ttl.OperationId!);
    const records = async () =>
      (await client.send(new GetServiceCommand({ Id }))).Service?.DnsConfig?.DnsRecords;
    expect(await records()).toEqual([{ Type: 'A', TTL: 300 }]);
    const retype = client.send(
      new UpdateServiceCommand({
        Id,
        Service: { DnsConfig: { DnsRecords: [{ Type: 'AAAA', TTL: 300 }] } },
      }),
    );
    await expectAws(
      target(),
      async () => {
        expect((await failure(retype)).name).toBe('InvalidInput');
        expect(await records()).toEqual([{ Type: 'A', TTL: 300 }]);
      },
      {
        name: 'update-service-dns-types-change',
        moto: async () => {
          await waitForOperation(client, (await retype).OperationId!);
          expect(await records()).toEqual([{ Type: 'AAAA', TTL: 300 }]);
        },
      },
    );
  });
});
