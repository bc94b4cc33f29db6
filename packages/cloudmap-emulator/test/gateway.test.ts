import { request } from 'node:http';
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DiscoverInstancesCommand,
  GetOperationCommand,
  ListNamespacesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERCEPTED_HOST, startEmulator, type RunningEmulator } from '../src/index.js';

/**
 * https-proxy-agent applies its constructor options to the proxy connection only; the TLS
 * session with the target host takes the request's options, so the CA is added there
 * (what NODE_EXTRA_CA_CERTS or AWS_CA_BUNDLE do for a whole process).
 */
class TrustingProxyAgent extends HttpsProxyAgent<string> {
  constructor(
    proxy: string,
    private readonly ca: string,
  ) {
    super(proxy);
  }

  override connect(
    req: Parameters<HttpsProxyAgent<string>['connect']>[0],
    opts: Parameters<HttpsProxyAgent<string>['connect']>[1],
  ) {
    return super.connect(req, { ...opts, ca: this.ca } as typeof opts);
  }
}

describe('gateway mode', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ operationDelayMs: 0, gatewayPort: 0 });
  });
  afterAll(() => emu.stop());

  /**
   * A client with no endpoint setting (the SDK's own AWS endpoints), or with `endpoint` as
   * given for every operation (`disableHostPrefix`), through the gateway.
   */
  const defaultEndpointClient = (endpoint?: string) =>
    new ServiceDiscoveryClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({
        httpsAgent: new TrustingProxyAgent(emu.gateway!.url, emu.gateway!.caCertPem),
      }),
      ...(endpoint === undefined ? {} : { endpoint, disableHostPrefix: true }),
    });

  /** The status of a CONNECT to `target` through the gateway. */
  const connectStatus = (target: string) =>
    new Promise<number | undefined>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: emu.gateway!.port,
        method: 'CONNECT',
        path: target,
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });

  it('serves the SDK on its default AWS endpoints, the data- host included', async () => {
    const client = defaultEndpointClient();
    const { OperationId } = await client.send(
      new CreateHttpNamespaceCommand({ Name: 'via-gateway' }),
    );
    const op = (await client.send(new GetOperationCommand({ OperationId }))).Operation!;
    expect(op.Status).toBe('SUCCESS');
    const { Service } = await client.send(
      new CreateServiceCommand({ Name: 'svc', NamespaceId: op.Targets!['NAMESPACE'] }),
    );
    await client.send(
      new RegisterInstanceCommand({
        ServiceId: Service!.Id,
        InstanceId: 'i',
        Attributes: { a: 'b' },
      }),
    );
    // DiscoverInstances goes to data-servicediscovery.eu-west-1.amazonaws.com: no disableHostPrefix needed.
    const found = await client.send(
      new DiscoverInstancesCommand({ NamespaceName: 'via-gateway', ServiceName: 'svc' }),
    );
    expect(found.Instances?.map((i) => i.InstanceId)).toEqual(['i']);
    const { operations } = await emu.admin.stats();
    expect(operations['DiscoverInstances']?.succeeded).toBe(1);
    expect(operations['CreateHttpNamespace']?.succeeded).toBe(1);
    const { hosts } = await emu.admin.stats();
    expect(hosts['data-servicediscovery.eu-west-1.amazonaws.com']).toEqual({
      DiscoverInstances: 1,
    });
    expect(Object.keys(hosts['servicediscovery.eu-west-1.amazonaws.com'] ?? {})).not.toContain(
      'DiscoverInstances',
    );
    client.destroy();
  });

  it('answers DiscoverInstances* on the data- host only, as AWS does (UnknownOperationException)', async () => {
    await emu.admin.resetStats();
    const control = defaultEndpointClient('https://servicediscovery.eu-west-1.amazonaws.com');
    const discover = new DiscoverInstancesCommand({ NamespaceName: 'n', ServiceName: 's' });
    await expect(control.send(discover)).rejects.toMatchObject({
      name: 'UnknownOperationException',
      $metadata: { httpStatusCode: 400 },
    });
    const data = defaultEndpointClient('https://data-servicediscovery.eu-west-1.amazonaws.com');
    await expect(data.send(new ListNamespacesCommand({}))).rejects.toMatchObject({
      name: 'UnknownOperationException',
    });
    const { operations, hosts } = await emu.admin.stats();
    expect(operations['DiscoverInstances']?.clientErrors).toBe(1);
    expect(operations['ListNamespaces']?.clientErrors).toBe(1);
    expect(hosts).toEqual({
      'servicediscovery.eu-west-1.amazonaws.com': { DiscoverInstances: 1 },
      'data-servicediscovery.eu-west-1.amazonaws.com': { ListNamespaces: 1 },
    });
    control.destroy();
    data.destroy();
  });

  it('serves VPC interface endpoint names: the control one and the data one', async () => {
    const id = 'vpce-0123456789abcdef0-abcdefgh';
    const control = defaultEndpointClient(
      `https://${id}.servicediscovery.eu-west-1.vpce.amazonaws.com`,
    );
    const data = defaultEndpointClient(
      `https://${id}.data-servicediscovery.eu-west-1.vpce.amazonaws.com`,
    );
    await control.send(new CreateHttpNamespaceCommand({ Name: 'via-vpce' }));
    await expect(
      data.send(new DiscoverInstancesCommand({ NamespaceName: 'via-vpce', ServiceName: 'none' })),
    ).rejects.toMatchObject({ name: 'ServiceNotFound' });
    await expect(
      control.send(new DiscoverInstancesCommand({ NamespaceName: 'via-vpce', ServiceName: 'x' })),
    ).rejects.toMatchObject({ name: 'UnknownOperationException' });
    control.destroy();
    data.destroy();
  });

  it('intercepts Cloud Map host names only', () => {
    for (const host of [
      'servicediscovery.us-west-2.amazonaws.com',
      'data-servicediscovery.us-west-2.amazonaws.com',
      'servicediscovery-fips.us-west-2.amazonaws.com',
      'data-servicediscovery-fips.us-west-2.amazonaws.com',
      'servicediscovery.cn-north-1.amazonaws.com.cn',
      'vpce-0a1b2c3d4e5f-abcd1234.servicediscovery.us-west-2.vpce.amazonaws.com',
      'vpce-0a1b2c3d4e5f-abcd1234.data-servicediscovery.us-west-2.vpce.amazonaws.com',
    ])
      expect(host).toMatch(INTERCEPTED_HOST);
    for (const host of [
      'example.com',
      'sts.us-west-2.amazonaws.com',
      'servicediscovery.us-west-2.amazonaws.com.example.com',
      'data-vpce-0a1b.servicediscovery.us-west-2.vpce.amazonaws.com',
      'vpce-0a1b.servicediscovery.us-west-2.amazonaws.com',
      'x.servicediscovery.us-west-2.vpce.amazonaws.com',
    ])
      expect(host).not.toMatch(INTERCEPTED_HOST);
  });

  it('refuses to tunnel to any other host', async () => {
    expect(await connectStatus('example.com:443')).toBe(403);
    expect(await connectStatus('sts.us-east-1.amazonaws.com:443')).toBe(403);
  });

  it('stop() ends tunnels a client keeps open, and binds the gateway to loopback only', async () => {
    const other = await startEmulator({ host: '0.0.0.0', gatewayPort: 0 });
    expect(other.gateway!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new ServiceDiscoveryClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      requestHandler: new NodeHttpHandler({
        httpsAgent: new TrustingProxyAgent(other.gateway!.url, other.gateway!.caCertPem),
      }),
    });
    await client.send(new ListNamespacesCommand({}));
    // The keep-alive tunnel is still open here; stop must not wait for the client.
    const started = Date.now();
    await other.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    client.destroy();
  });

  it('a gateway port already in use fails the start with EADDRINUSE', async () => {
    const failed = startEmulator({ port: 0, gatewayPort: emu.gateway!.port });
    await expect(failed).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('writes the CA bundle to a file for other clients (AWS_CA_BUNDLE)', async () => {
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(emu.gateway!.caFile, 'utf8')).toBe(emu.gateway!.caCertPem);
    expect(emu.gateway!.caCertPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });
});
