import {
  CreateServiceCommand,
  DeregisterInstanceCommand,
  UpdateInstanceCustomHealthStatusCommand,
  UpdateServiceCommand,
  type DnsRecord,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/index.js';
import {
  httpNamespace,
  privateDnsNamespace,
  registerInstance,
  sdkClient,
  waitForOperation,
} from './sdk.js';

// A real resolver (c-ares through node:dns) against the emulator's DNS port, the emulator
// driven through the unmodified SDK: what a VPC client of a private DNS namespace sees.
let emu: RunningEmulator;
let client: ServiceDiscoveryClient;
let resolver: Resolver;

beforeAll(async () => {
  emu = await startEmulator({ operationDelayMs: 0, dnsPort: 0 });
  client = sdkClient(emu.url);
  resolver = new Resolver({ timeout: 2_000, tries: 1 });
  resolver.setServers([emu.dns!.address]);
});
afterAll(async () => {
  client.destroy();
  await emu.stop();
});
beforeEach(async () => {
  await emu.admin.reset();
});

async function dnsService(
  ns: string,
  name: string,
  types: DnsRecord['Type'][],
  extra: { routing?: 'MULTIVALUE' | 'WEIGHTED'; custom?: boolean; ttl?: number } = {},
): Promise<string> {
  const { Service } = await client.send(
    new CreateServiceCommand({
      Name: name,
      NamespaceId: ns,
      DnsConfig: {
        RoutingPolicy: extra.routing ?? 'MULTIVALUE',
        DnsRecords: types.map((Type) => ({ Type: Type!, TTL: extra.ttl ?? 30 })),
      },
      ...(extra.custom ? { HealthCheckCustomConfig: {} } : {}),
    }),
  );
  return Service!.Id!;
}

const dnsCode = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'OK',
    (e: NodeJS.ErrnoException) => e.code ?? String(e),
  );

describe('emulator DNS', () => {
  it('surfaces its address on loopback', () => {
    expect(emu.dns?.host).toBe('127.0.0.1');
    expect(emu.dns?.address).toBe(`127.0.0.1:${emu.dns!.port}`);
  });

  it('answers A and SRV for <service>.<namespace> from the registered instances, with the TTL of DnsConfig', async () => {
    const ns = await privateDnsNamespace(client, 'corp.internal');
    const svc = await dnsService(ns, 'web', ['A', 'SRV'], { ttl: 42 });
    await registerInstance(client, svc, 'i-1', {
      AWS_INSTANCE_IPV4: '10.0.0.1',
      AWS_INSTANCE_PORT: '8080',
    });
    await registerInstance(client, svc, 'i-2', {
      AWS_INSTANCE_IPV4: '10.0.0.2',
      AWS_INSTANCE_PORT: '8081',
    });

    const a = await resolver.resolve4('web.corp.internal', { ttl: true });
    expect(a.map((r) => r.address).sort()).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(a.map((r) => r.ttl)).toEqual([42, 42]);
    const srv = await resolver.resolveSrv('web.corp.internal');
    expect(srv.map((r) => `${r.name}:${r.port}:${r.priority}:${r.weight}`).sort()).toEqual([
      'i-1.web.corp.internal:8080:1:1',
      'i-2.web.corp.internal:8081:1:1',
    ]);
    // The SRV targets resolve to their instance's address.
    expect(await resolver.resolve4('i-2.web.corp.internal')).toEqual(['10.0.0.2']);
    // Case does not matter in DNS names.
    expect((await resolver.resolve4('WEB.Corp.Internal')).sort()).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('AAAA records come from AWS_INSTANCE_IPV6', async () => {
    const ns = await privateDnsNamespace(client, 'six.internal');
    const svc = await dnsService(ns, 'api', ['AAAA']);
    await registerInstance(client, svc, 'i-6', { AWS_INSTANCE_IPV6: 'fd00::1:2' });
    expect(await resolver.resolve6('api.six.internal')).toEqual(['fd00::1:2']);
    expect(await dnsCode(resolver.resolve4('api.six.internal'))).toBe('ENODATA');
  });

  it('NXDOMAIN for unknown names and services without records; NOERROR-empty for other types; REFUSED outside its zones', async () => {
    const ns = await privateDnsNamespace(client, 'zone.internal');
    const svc = await dnsService(ns, 'db', ['A']);
    expect(await dnsCode(resolver.resolve4('db.zone.internal'))).toBe('ENOTFOUND');
    await registerInstance(client, svc, 'i-1', { AWS_INSTANCE_IPV4: '10.1.0.1' });
    expect(await resolver.resolve4('db.zone.internal')).toEqual(['10.1.0.1']);
    expect(await dnsCode(resolver.resolveSrv('db.zone.internal'))).toBe('ENODATA');
    expect(await dnsCode(resolver.resolve4('nope.zone.internal'))).toBe('ENOTFOUND');
    expect(await dnsCode(resolver.resolve4('db.elsewhere.example'))).toBe('EREFUSED');
    // An HTTP namespace has no hosted zone.
    await httpNamespace(client, 'plain');
    expect(await dnsCode(resolver.resolve4('x.plain'))).toBe('EREFUSED');
    // The zone apex answers its SOA.
    expect((await resolver.resolveSoa('zone.internal')).hostmaster).toBe(
      'awsdns-hostmaster.amazon.com',
    );
  });

  it('follows registrations and deregistrations once their operation succeeds', async () => {
    const ns = await privateDnsNamespace(client, 'scale.internal');
    const svc = await dnsService(ns, 'web', ['A']);
    await registerInstance(client, svc, 'i-1', { AWS_INSTANCE_IPV4: '10.2.0.1' });
    await registerInstance(client, svc, 'i-2', { AWS_INSTANCE_IPV4: '10.2.0.2' });
    expect((await resolver.resolve4('web.scale.internal')).sort()).toEqual([
      '10.2.0.1',
      '10.2.0.2',
    ]);
    const { OperationId } = await client.send(
      new DeregisterInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }),
    );
    await waitForOperation(client, OperationId!);
    expect(await resolver.resolve4('web.scale.internal')).toEqual(['10.2.0.2']);
  });

  it('MULTIVALUE answers at most 8 healthy records, and all (≤8) when none is healthy', async () => {
    const ns = await privateDnsNamespace(client, 'many.internal');
    const svc = await dnsService(ns, 'web', ['A'], { custom: true });
    for (let i = 1; i <= 10; i++) {
      await registerInstance(client, svc, `i-${i}`, { AWS_INSTANCE_IPV4: `10.3.0.${i}` });
    }
    const answer = await resolver.resolve4('web.many.internal');
    expect(answer).toHaveLength(8);
    expect(new Set(answer).size).toBe(8);

    for (let i = 1; i <= 9; i++) {
      await client.send(
        new UpdateInstanceCustomHealthStatusCommand({
          ServiceId: svc,
          InstanceId: `i-${i}`,
          Status: 'UNHEALTHY',
        }),
      );
    }
    expect(await resolver.resolve4('web.many.internal')).toEqual(['10.3.0.10']);
    await client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId: svc,
        InstanceId: 'i-10',
        Status: 'UNHEALTHY',
      }),
    );
    // Route 53 multivalue: when every record is unhealthy, up to eight of them are returned.
    expect(await resolver.resolve4('web.many.internal')).toHaveLength(8);
  });

  it('WEIGHTED answers one record; UpdateService changes the TTL', async () => {
    const ns = await privateDnsNamespace(client, 'w.internal');
    const svc = await dnsService(ns, 'web', ['A'], { routing: 'WEIGHTED', ttl: 60 });
    await registerInstance(client, svc, 'i-1', { AWS_INSTANCE_IPV4: '10.4.0.1' });
    await registerInstance(client, svc, 'i-2', { AWS_INSTANCE_IPV4: '10.4.0.2' });
    expect(await resolver.resolve4('web.w.internal')).toHaveLength(1);
    const { OperationId } = await client.send(
      new UpdateServiceCommand({
        Id: svc,
        Service: { DnsConfig: { DnsRecords: [{ Type: 'A', TTL: 5 }] } },
      }),
    );
    await waitForOperation(client, OperationId!);
    const [rec] = await resolver.resolve4('web.w.internal', { ttl: true });
    expect(rec?.ttl).toBe(5);
  });

  it('CNAME records answer with AWS_INSTANCE_CNAME', async () => {
    const ns = await privateDnsNamespace(client, 'c.internal');
    const svc = await dnsService(ns, 'alias', ['CNAME'], { routing: 'WEIGHTED' });
    await registerInstance(client, svc, 'i-1', { AWS_INSTANCE_CNAME: 'backend.example.com' });
    expect(await resolver.resolveCname('alias.c.internal')).toEqual(['backend.example.com']);
  });

  it('answers over TCP too (length-prefixed), and truncates big UDP answers for the TCP retry', async () => {
    const ns = await privateDnsNamespace(client, 'tcp.internal');
    const svc = await dnsService(ns, 'a-rather-long-service-name-for-big-answers', ['SRV']);
    for (let i = 1; i <= 8; i++) {
      await registerInstance(client, svc, `instance-with-a-long-identifier-number-${i}`, {
        AWS_INSTANCE_IPV4: `10.5.0.${i}`,
        AWS_INSTANCE_PORT: '443',
      });
    }
    // Over 512 bytes: c-ares gets TC over UDP and asks again over TCP; all 8 come back.
    const srv = await resolver.resolveSrv(
      'a-rather-long-service-name-for-big-answers.tcp.internal',
    );
    expect(srv).toHaveLength(8);

    const raw = await tcpQuery(
      emu.dns!.port,
      'a-rather-long-service-name-for-big-answers.tcp.internal',
      33,
    );
    expect(raw.readUInt16BE(0)).toBe(0x1234);
    expect(raw.readUInt16BE(2) & 0x8400).toBe(0x8400); // QR and AA
    expect(raw.readUInt16BE(6)).toBe(8); // ANCOUNT
  });
});

/** One query over TCP, hand-encoded: checks the framing independently of c-ares. */
function tcpQuery(port: number, name: string, qtype: number): Promise<Buffer> {
  const labels = name
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const question = Buffer.concat([...labels, Buffer.from([0, 0, qtype, 0, 1])]);
  const msg = Buffer.concat([Buffer.from([0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0]), question]);
  const framed = Buffer.concat([Buffer.from([msg.length >> 8, msg.length & 0xff]), msg]);
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        socket.end();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
    socket.on('error', reject);
    socket.write(framed);
  });
}
