import {
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  ListNamespacesCommand,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createServiceDiscoveryClients,
  isDevelopmentEndpoint,
  type ServiceDiscoveryConfig,
} from '../../src/cloudmap/sdk-client.js';
import { createSdkCloudMapPort } from '../../src/cloudmap/sdk-port.js';

/** Stops a request once signed, before it leaves: what host it would have gone to. */
class Stopped extends Error {
  constructor(readonly url: string) {
    super('stopped before sending');
  }
}

function stopBeforeSending(client: ServiceDiscoveryClient): void {
  client.middlewareStack.add(
    () => (args) => {
      const req = args.request as { protocol: string; hostname: string; port?: number };
      const port = req.port === undefined ? '' : `:${String(req.port)}`;
      throw new Stopped(`${req.protocol}//${req.hostname}${port}`);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'stopBeforeSending' },
  );
}

const urlOf = async (call: Promise<unknown>): Promise<string> => {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  let e = error;
  while (e instanceof Error && !(e instanceof Stopped)) e = e.cause;
  if (!(e instanceof Stopped)) throw error;
  return e.url;
};

/** Where ListNamespaces (control) and DiscoverInstances* (data) go with `config`. */
async function hosts(config: ServiceDiscoveryConfig) {
  const clients = createServiceDiscoveryClients({
    credentials: async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }),
    ...config,
  });
  stopBeforeSending(clients.control);
  if (clients.data !== clients.control) stopBeforeSending(clients.data);
  const port = createSdkCloudMapPort(clients.control, clients.data);
  const out = {
    control: await urlOf(clients.control.send(new ListNamespacesCommand({}))),
    discover: await urlOf(port.discoverInstances('ns', 'svc')),
    revision: await urlOf(port.discoverInstancesRevision('ns', 'svc')),
  };
  // The SDK client itself, without the port, agrees.
  expect(
    await urlOf(
      clients.data.send(new DiscoverInstancesCommand({ NamespaceName: 'n', ServiceName: 's' })),
    ),
  ).toBe(out.discover);
  expect(
    await urlOf(
      clients.data.send(
        new DiscoverInstancesRevisionCommand({ NamespaceName: 'n', ServiceName: 's' }),
      ),
    ),
  ).toBe(out.revision);
  return out;
}

describe('the hosts the agents send each operation to', () => {
  const savedFips = process.env['AWS_USE_FIPS_ENDPOINT'];
  afterEach(() => {
    if (savedFips === undefined) delete process.env['AWS_USE_FIPS_ENDPOINT'];
    else process.env['AWS_USE_FIPS_ENDPOINT'] = savedFips;
  });

  it('default: the region, DiscoverInstances* on its data- host', async () => {
    expect(await hosts({ region: 'us-west-2' })).toEqual({
      control: 'https://servicediscovery.us-west-2.amazonaws.com',
      discover: 'https://data-servicediscovery.us-west-2.amazonaws.com',
      revision: 'https://data-servicediscovery.us-west-2.amazonaws.com',
    });
  });

  it('FIPS, the SDK standard setting (AWS_USE_FIPS_ENDPOINT=true): the -fips hosts', async () => {
    process.env['AWS_USE_FIPS_ENDPOINT'] = 'true';
    expect(await hosts({ region: 'us-west-2' })).toEqual({
      control: 'https://servicediscovery-fips.us-west-2.amazonaws.com',
      discover: 'https://data-servicediscovery-fips.us-west-2.amazonaws.com',
      revision: 'https://data-servicediscovery-fips.us-west-2.amazonaws.com',
    });
  });

  it('an https endpoint override (FIPS-style) keeps the data- host prefix', async () => {
    const endpoint = 'https://servicediscovery-fips.us-west-2.amazonaws.com';
    expect(await hosts({ region: 'us-west-2', endpoint })).toEqual({
      control: endpoint,
      discover: 'https://data-servicediscovery-fips.us-west-2.amazonaws.com',
      revision: 'https://data-servicediscovery-fips.us-west-2.amazonaws.com',
    });
  });

  it('a VPC endpoint without private DNS: both names, DiscoverInstances* on the data one as given', async () => {
    const control =
      'https://vpce-0a1b2c3d4e5f-abcd1234.servicediscovery.us-west-2.vpce.amazonaws.com';
    const data =
      'https://vpce-0f1e2d3c4b5a-dcba4321.data-servicediscovery.us-west-2.vpce.amazonaws.com';
    expect(await hosts({ region: 'us-west-2', endpoint: control, dataEndpoint: data })).toEqual({
      control,
      discover: data,
      revision: data,
    });
  });

  it('a development endpoint (plain http): every operation on it, no prefix', async () => {
    const endpoint = 'http://127.0.0.1:4566';
    expect(isDevelopmentEndpoint(endpoint)).toBe(true);
    expect(isDevelopmentEndpoint('https://servicediscovery.us-west-2.amazonaws.com')).toBe(false);
    expect(await hosts({ region: 'us-east-1', endpoint })).toEqual({
      control: endpoint,
      discover: endpoint,
      revision: endpoint,
    });
  });
});
