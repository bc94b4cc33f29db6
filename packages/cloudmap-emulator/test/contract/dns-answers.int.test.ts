// DNS answers for a DNS namespace's services, as Route 53 auto naming keeps them (issue 17,
// ADR 0010): the records follow registration, custom health and UpdateService's TTL. AWS is
// observed through DNS (the emulator's server, a real resolver); moto answers no DNS and
// writes nothing into the namespace's hosted zone, which its Route 53 API shows.
import { Resolver } from 'node:dns/promises';
import {
  CreateServiceCommand,
  DeregisterInstanceCommand,
  GetNamespaceCommand,
  GetServiceCommand,
  UpdateInstanceCustomHealthStatusCommand,
  UpdateServiceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { privateDnsNamespace, registerInstance, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, type Target } from './harness.js';

/** moto's Route 53 (same server): `<type> <name>` of every record set in the zone, sorted. */
async function motoZoneRecords(t: Target, zoneId: string): Promise<string[]> {
  const id = zoneId.replace(/^\/hostedzone\//, '');
  const res = await fetch(`${t.endpoint}/2013-04-01/hostedzone/${id}/rrset`, {
    // moto picks the service from the credential scope; it checks no signature.
    headers: {
      Authorization:
        'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/route53/aws4_request, SignedHeaders=host, Signature=0',
    },
  });
  expect(res.status).toBe(200);
  const xml = await res.text();
  return [...xml.matchAll(/<ResourceRecordSet><Name>([^<]*)<\/Name><Type>([^<]*)<\/Type>/g)]
    .map(([, name, type]) => `${type} ${name}`)
    .sort();
}

contractSuite('DNS answers', (target) => {
  it('A and SRV answers follow registration, custom health and the TTL UpdateService sets', async () => {
    const t = target();
    const { client } = t;
    const ns = await privateDnsNamespace(client, 'corp.local');
    const { Service } = await client.send(
      new CreateServiceCommand({
        Name: 'web',
        NamespaceId: ns,
        DnsConfig: {
          RoutingPolicy: 'MULTIVALUE',
          DnsRecords: [
            { Type: 'A', TTL: 10 },
            { Type: 'SRV', TTL: 10 },
          ],
        },
        HealthCheckCustomConfig: {},
      }),
    );
    const ServiceId = Service!.Id!;
    for (const [id, ip, init] of [
      ['i-1', '10.0.0.1', 'HEALTHY'],
      ['i-2', '10.0.0.2', 'UNHEALTHY'],
    ] as const)
      expect(
        (
          await registerInstance(client, ServiceId, id, {
            AWS_INSTANCE_IPV4: ip,
            AWS_INSTANCE_PORT: '8080',
            AWS_INIT_HEALTH_STATUS: init,
          })
        ).Status,
      ).toBe('SUCCESS');

    const resolver = new Resolver({ timeout: 2_000, tries: 1 });
    if (t.dns !== undefined) resolver.setServers([t.dns]);
    const a = async () => (await resolver.resolve4('web.corp.local')).sort();
    const srv = async () =>
      (await resolver.resolveSrv('web.corp.local')).map((r) => `${r.name}:${r.port}`).sort();
    const zoneId = (await client.send(new GetNamespaceCommand({ Id: ns }))).Namespace?.Properties
      ?.DnsProperties?.HostedZoneId;
    const expectRecords = (aws: () => Promise<void>) =>
      expectAws(t, aws, {
        name: 'no-dns-records',
        moto: async () =>
          // Only the zone's own records, under a name that is not the namespace's.
          expect(await motoZoneRecords(t, zoneId!)).toEqual([
            'NS corp.local-hz',
            'SOA corp.local-hz.',
          ]),
      });

    // Only the healthy instance is answered (AWS_INIT_HEALTH_STATUS); SRV targets it by name.
    await expectRecords(async () => {
      expect(await a()).toEqual(['10.0.0.1']);
      expect(await srv()).toEqual(['i-1.web.corp.local:8080']);
      expect(await resolver.resolve4('i-1.web.corp.local')).toEqual(['10.0.0.1']);
    });

    // ECS reports the second task healthy: it is answered too.
    await client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId,
        InstanceId: 'i-2',
        Status: 'HEALTHY',
      }),
    );
    await expectRecords(async () => {
      expect(await a()).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(await srv()).toEqual(['i-1.web.corp.local:8080', 'i-2.web.corp.local:8080']);
    });

    // Deregistered: gone from A and SRV, and its own name no longer resolves.
    const { OperationId } = await client.send(
      new DeregisterInstanceCommand({ ServiceId, InstanceId: 'i-1' }),
    );
    await waitForOperation(client, OperationId!);
    await expectRecords(async () => {
      expect(await a()).toEqual(['10.0.0.2']);
      expect(await srv()).toEqual(['i-2.web.corp.local:8080']);
      await expect(resolver.resolve4('i-1.web.corp.local')).rejects.toMatchObject({
        code: 'ENOTFOUND',
      });
    });

    // UpdateService changes the records' TTL (both keep the new TTL on the service).
    const update = await client.send(
      new UpdateServiceCommand({
        Id: ServiceId,
        Service: {
          DnsConfig: {
            DnsRecords: [
              { Type: 'A', TTL: 60 },
              { Type: 'SRV', TTL: 60 },
            ],
          },
        },
      }),
    );
    await waitForOperation(client, update.OperationId!);
    const { Service: updated } = await client.send(new GetServiceCommand({ Id: ServiceId }));
    expect(updated?.DnsConfig?.DnsRecords?.map((r) => r.TTL)).toEqual([60, 60]);
    await expectRecords(async () => {
      expect((await resolver.resolve4('web.corp.local', { ttl: true })).map((r) => r.ttl)).toEqual([
        60,
      ]);
    });
  });
});
