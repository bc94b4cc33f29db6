import {
  CreateHttpNamespaceCommand,
  DiscoverInstancesCommand,
  ListNamespacesCommand,
  ServiceDiscoveryClient,
  GetInstanceCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
} from '@aws-sdk/client-servicediscovery';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/index.js';
import { httpNamespace, httpService, sdkClient, waitForOperation } from './sdk.js';

describe('library API', () => {
  let emu: RunningEmulator | undefined;
  afterEach(async () => {
    await emu?.stop();
    emu = undefined;
  });

  it('starts on a free loopback port and serves the unmodified SDK', async () => {
    emu = await startEmulator({ port: 0, host: '127.0.0.1', operationDelayMs: 10 });
    expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
    expect(emu.port).toBeGreaterThan(0);
    const client = sdkClient(emu.url);
    const ns = await httpNamespace(client, 'lib-ns');
    const svc = await httpService(client, ns, 'web');
    const { OperationId } = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i-1', Attributes: { k: 'v' } }),
    );
    expect((await waitForOperation(client, OperationId!)).Status).toBe('SUCCESS');
    const got = await client.send(new GetInstanceCommand({ ServiceId: svc, InstanceId: 'i-1' }));
    expect(got.Instance?.Attributes).toEqual({ k: 'v' });
    const found = await client.send(
      new DiscoverInstancesCommand({ NamespaceName: 'lib-ns', ServiceName: 'web' }),
    );
    expect(found.Instances?.map((i) => i.InstanceId)).toEqual(['i-1']);
    expect(await emu.admin.health()).toEqual({ status: 'ok' });
  });

  it('AWS_ENDPOINT_URL_SERVICEDISCOVERY alone points an unconfigured SDK client at it', async () => {
    emu = await startEmulator({ port: 0, operationDelayMs: 0 });
    const saved = process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
    process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] = emu.url;
    try {
      const client = new ServiceDiscoveryClient({
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        disableHostPrefix: true,
      });
      await client.send(new CreateHttpNamespaceCommand({ Name: 'from-env' }));
      const { Namespaces } = await client.send(new ListNamespacesCommand({}));
      expect(Namespaces?.map((n) => n.Name)).toEqual(['from-env']);
      client.destroy();
    } finally {
      if (saved === undefined) delete process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
      else process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] = saved;
    }
  });

  it('stop() closes keep-alive connections and frees the port', async () => {
    emu = await startEmulator({ port: 0 });
    const client = sdkClient(emu.url);
    await client.send(new ListServicesCommand({}));
    const { port } = emu;
    await emu.stop();
    emu = undefined;
    // The same port can be bound again at once: nothing of the old server is left.
    emu = await startEmulator({ port });
    expect(emu.port).toBe(port);
  });
});
