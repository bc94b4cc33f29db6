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
import { startEmulator, type RunningEmulator } from '../src/index.js';

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

  /** A client with no endpoint setting: the SDK's own AWS endpoints, through HTTPS_PROXY. */
  const defaultEndpointClient = () =>
    new ServiceDiscoveryClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({
        httpsAgent: new TrustingProxyAgent(emu.gateway!.url, emu.gateway!.caCertPem),
      }),
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
    client.destroy();
  });

  it('refuses to tunnel to any other host', async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: emu.gateway!.port,
        method: 'CONNECT',
        path: 'example.com:443',
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
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
