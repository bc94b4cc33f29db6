import {
  DiscoverInstancesCommand,
  GetOperationCommand,
  ListInstancesCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
} from '@aws-sdk/client-servicediscovery';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/index.js';
import { failure } from './contract/harness.js';
import { httpNamespace, httpService, sdkClient, waitForOperation } from './sdk.js';

describe('fault injection through the admin API', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ operationDelayMs: 0 });
  });
  afterAll(() => emu.stop());
  beforeEach(() => emu.admin.reset());

  it('the SDK retries an injected ThrottlingException and then succeeds', async () => {
    await emu.admin.throttle('ListNamespaces', { next: 2 });
    const client = sdkClient(emu.url, { maxAttempts: 3 });
    const out = await client.send(new ListNamespacesCommand({}));
    expect(out.$metadata.attempts).toBe(3);
    expect(out.Namespaces).toEqual([]);
    const stats = await emu.admin.stats();
    expect(stats.operations['ListNamespaces']).toMatchObject({
      calls: 3,
      throttled: 2,
      succeeded: 1,
    });
    expect((await emu.admin.faults()).operations?.['ListNamespaces']?.throttle?.next).toBe(0);
  });

  it('a throttled control-plane call is ThrottlingException, 400, "Rate exceeded"', async () => {
    await emu.admin.throttle('ListServices', { share: 1 });
    const err = await failure(sdkClient(emu.url).send(new ListServicesCommand({})));
    expect(err).toMatchObject({ name: 'ThrottlingException', status: 400 });
    expect((err.error as Error).message).toBe('Rate exceeded');
  });

  it('a throttled data-plane call is RequestLimitExceeded', async () => {
    const client = sdkClient(emu.url);
    await httpService(client, await httpNamespace(client, 'dp'), 'svc');
    await emu.admin.throttle('DiscoverInstances', { next: 1 });
    const err = await failure(
      client.send(new DiscoverInstancesCommand({ NamespaceName: 'dp', ServiceName: 'svc' })),
    );
    expect(err.name).toBe('RequestLimitExceeded');
  });

  it('the token bucket throttles past its burst, and AWS data-plane limits are on by default', async () => {
    expect((await emu.admin.faults()).rateLimits?.['DiscoverInstances']).toEqual({
      ratePerSecond: 1000,
      burst: 2000,
    });
    await emu.admin.patchFaults({
      rateLimits: { ListServices: { ratePerSecond: 0.001, burst: 2 } },
    });
    const client = sdkClient(emu.url);
    await client.send(new ListServicesCommand({}));
    await client.send(new ListServicesCommand({}));
    expect((await failure(client.send(new ListServicesCommand({})))).name).toBe(
      'ThrottlingException',
    );
  });

  it("the account's other users spend the quota: the bucket keeps AWS's figure and leaves the rest", async () => {
    const client = sdkClient(emu.url, { maxAttempts: 1 });
    await httpService(client, await httpNamespace(client, 'others'), 'svc');
    // 1,000/s with 2,000 burst, of which the rest of the account spends 999/s (its burst
    // spent): 1/s is left, from an empty bucket.
    await emu.admin.patchFaults({
      rateLimits: {
        DiscoverInstances: { ratePerSecond: 1000, burst: 2000, otherUsersPerSecond: 999 },
      },
    });
    const discover = () =>
      client.send(new DiscoverInstancesCommand({ NamespaceName: 'others', ServiceName: 'svc' }));
    expect((await failure(discover())).name).toBe('RequestLimitExceeded');
    await new Promise((r) => setTimeout(r, 1_100));
    await discover();
    expect((await failure(discover())).name).toBe('RequestLimitExceeded');
  });

  it('injected 5xx errors are retried by the SDK; without retries the caller sees them', async () => {
    await emu.admin.injectErrors('ListServices', { next: 1, status: 503 });
    const once = await failure(sdkClient(emu.url).send(new ListServicesCommand({})));
    expect(once).toMatchObject({ name: 'ServiceUnavailable', status: 503 });
    await emu.admin.injectErrors('ListServices', { next: 1 });
    const retried = await sdkClient(emu.url, { maxAttempts: 2 }).send(new ListServicesCommand({}));
    expect(retried.$metadata.attempts).toBe(2);
    expect((await emu.admin.stats()).operations['ListServices']?.serverErrors).toBe(2);
  });

  it('latency delays the named operation only', async () => {
    await emu.admin.setLatency('ListServices', 200);
    const client = sdkClient(emu.url);
    let t = Date.now();
    await client.send(new ListServicesCommand({}));
    expect(Date.now() - t).toBeGreaterThanOrEqual(190);
    t = Date.now();
    await client.send(new ListNamespacesCommand({}));
    expect(Date.now() - t).toBeLessThan(150);
  });

  it('a full outage answers 503 or drops connections, until it is lifted', async () => {
    const client = sdkClient(emu.url);
    await emu.admin.outage('unavailable');
    expect((await failure(client.send(new ListNamespacesCommand({})))).status).toBe(503);
    await emu.admin.outage('reset');
    const dropped = await failure(client.send(new ListNamespacesCommand({})));
    expect(dropped.status).toBeUndefined();
    expect(dropped.name).not.toBe('ThrottlingException');
    await emu.admin.outage(false);
    expect((await client.send(new ListNamespacesCommand({}))).Namespaces).toEqual([]);
  });

  it('failOperations makes the submitted operation FAIL and leaves the state unchanged', async () => {
    const client = sdkClient(emu.url);
    const svc = await httpService(client, await httpNamespace(client, 'failing'), 'svc');
    await emu.admin.failOperations('RegisterInstance', { next: 1 });
    const { OperationId } = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: {} }),
    );
    const op = (await client.send(new GetOperationCommand({ OperationId }))).Operation;
    expect(op).toMatchObject({ Status: 'FAIL', ErrorCode: 'INTERNAL_FAILURE' });
    expect((await client.send(new ListInstancesCommand({ ServiceId: svc }))).Instances).toEqual([]);
    // The next registration is not affected.
    const next = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: {} }),
    );
    expect((await waitForOperation(client, next.OperationId!)).Status).toBe('SUCCESS');
  });

  it('a seed makes throttle shares reproducible', async () => {
    const client = sdkClient(emu.url);
    const pattern = async () => {
      await emu.admin.setFaults({
        seed: 42,
        operations: { ListServices: { throttle: { share: 0.5 } } },
      });
      const outcomes: boolean[] = [];
      for (let i = 0; i < 20; i++) {
        outcomes.push(
          await client.send(new ListServicesCommand({})).then(
            () => true,
            () => false,
          ),
        );
      }
      return outcomes;
    };
    const first = await pattern();
    expect(first).toContain(true);
    expect(first).toContain(false);
    expect(await pattern()).toEqual(first);
  });

  it('"*" applies a fault to every operation, and clearFaults lifts it', async () => {
    await emu.admin.throttle('*', { share: 1 });
    const client = sdkClient(emu.url);
    expect((await failure(client.send(new ListNamespacesCommand({})))).name).toBe(
      'ThrottlingException',
    );
    await emu.admin.clearFaults();
    expect((await client.send(new ListNamespacesCommand({}))).Namespaces).toEqual([]);
  });
});
