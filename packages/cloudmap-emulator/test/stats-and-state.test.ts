import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DiscoverInstancesCommand,
  GetNamespaceCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, StateFileError, type RunningEmulator } from '../src/index.js';
import { failure } from './contract/harness.js';
import { httpNamespace, httpService, sdkClient, waitForOperation } from './sdk.js';
import { scratchDirs } from './scratch.js';

const tempDir = scratchDirs('emu-state-');

describe('call counts, state persistence and configuration', () => {
  const running: RunningEmulator[] = [];
  const start = async (...args: Parameters<typeof startEmulator>) => {
    const emu = await startEmulator(...args);
    running.push(emu);
    return emu;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop()));
  });

  it('counts calls per operation and totals reads and writes', async () => {
    const emu = await start({ operationDelayMs: 0 });
    const client = sdkClient(emu.url);
    const svc = await httpService(client, await httpNamespace(client, 'count'), 'svc');
    await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: {} }),
    );
    await client.send(new DiscoverInstancesCommand({ NamespaceName: 'count', ServiceName: 'svc' }));
    await failure(client.send(new GetNamespaceCommand({ Id: 'ns-nope' })));
    const { operations, totals } = await emu.admin.stats();
    expect(operations['CreateHttpNamespace']).toEqual({
      calls: 1,
      succeeded: 1,
      clientErrors: 0,
      throttled: 0,
      serverErrors: 0,
    });
    expect(operations['GetNamespace']).toMatchObject({ calls: 1, clientErrors: 1 });
    // Writes: CreateHttpNamespace, CreateService, RegisterInstance. Reads: GetOperation (1 poll), Discover, GetNamespace.
    expect(totals).toMatchObject({ writes: 3, writesSucceeded: 3, calls: totals.reads + 3 });
    expect(totals.reads).toBeGreaterThanOrEqual(3);
  });

  it('counts calls per caller: the access key id each call was signed with', async () => {
    const emu = await start({ operationDelayMs: 0 });
    const as = (accessKeyId: string) =>
      new ServiceDiscoveryClient({
        region: 'us-east-1',
        endpoint: emu.url,
        credentials: { accessKeyId, secretAccessKey: 'x' },
        maxAttempts: 1,
      });
    await as('c1-import').send(new ListNamespacesCommand({}));
    await as('c1-import').send(new ListNamespacesCommand({}));
    await failure(as('c2-export').send(new GetNamespaceCommand({ Id: 'ns-nope' })));
    const { callers } = await emu.admin.stats();
    expect(callers).toEqual({
      'c1-import': { ListNamespaces: 2 },
      'c2-export': { GetNamespace: 1 },
    });
    await emu.admin.resetStats();
    expect((await emu.admin.stats()).callers).toEqual({});
  });

  it('resetStats zeroes the counts without touching the state', async () => {
    const emu = await start({ operationDelayMs: 0 });
    const client = sdkClient(emu.url);
    await httpNamespace(client, 'kept');
    await emu.admin.resetStats();
    expect((await emu.admin.stats()).totals.calls).toBe(0);
    expect((await client.send(new ListNamespacesCommand({}))).Namespaces).toHaveLength(1);
    expect((await emu.admin.stats()).totals).toMatchObject({ calls: 1, reads: 1, writes: 0 });
  });

  it('a state file keeps namespaces, services and instances across a restart', async () => {
    const stateFile = join(tempDir(), 'state.json');
    const first = await start({ stateFile, operationDelayMs: 0 });
    const client = sdkClient(first.url);
    const svc = await httpService(client, await httpNamespace(client, 'persist'), 'svc');
    const reg = await client.send(
      new RegisterInstanceCommand({ ServiceId: svc, InstanceId: 'i', Attributes: { a: 'b' } }),
    );
    await waitForOperation(client, reg.OperationId!);
    await first.stop();
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ version: 1 });

    const second = await start({ stateFile });
    const again = sdkClient(second.url);
    const found = await again.send(
      new DiscoverInstancesCommand({ NamespaceName: 'persist', ServiceName: 'svc' }),
    );
    expect(found.Instances?.map((i) => i.Attributes)).toEqual([{ a: 'b' }]);
    expect((await second.admin.saveState()).path).toBe(stateFile);
  });

  it('a state file that is not emulator state refuses to start', async () => {
    const stateFile = join(tempDir(), 'state.json');
    writeFileSync(stateFile, '{"something":"else"}');
    await expect(startEmulator({ stateFile })).rejects.toBeInstanceOf(StateFileError);
  });

  it('reset empties the state; replaceState seeds it', async () => {
    const emu = await start({ operationDelayMs: 0 });
    const client = sdkClient(emu.url);
    await httpNamespace(client, 'seed');
    const snapshot = await emu.admin.state();
    await emu.admin.reset();
    expect((await client.send(new ListNamespacesCommand({}))).Namespaces).toEqual([]);
    await emu.admin.replaceState(snapshot);
    expect(
      (await client.send(new ListNamespacesCommand({}))).Namespaces?.map((n) => n.Name),
    ).toEqual(['seed']);
  });

  it('config: smithy status mode answers 404 for NamespaceNotFound; quotas and delays can change', async () => {
    const emu = await start({});
    const client = sdkClient(emu.url);
    expect((await failure(client.send(new GetNamespaceCommand({ Id: 'ns-x' })))).status).toBe(400);
    const config = await emu.admin.setConfig({
      statusMode: 'smithy',
      operationDelayMs: 0,
      quotas: { namespacesPerRegion: 1 },
    });
    expect(config).toMatchObject({
      statusMode: 'smithy',
      operationDelayMs: 0,
      quotas: { namespacesPerRegion: 1, instancesPerService: 1000 },
    });
    expect((await failure(client.send(new GetNamespaceCommand({ Id: 'ns-x' })))).status).toBe(404);
    await httpNamespace(client, 'only');
    expect((await failure(client.send(new ListServicesCommand({ MaxResults: 101 })))).name).toBe(
      'InvalidInput',
    );
  });

  it('a malformed fault or config change is refused with 400 and changes nothing', async () => {
    const emu = await start({});
    const before = await emu.admin.faults();
    const typo = emu.admin.patchFaults({
      operations: { ListServices: { throtle: { next: 1 } } as never },
    });
    await expect(typo).rejects.toMatchObject({ name: 'EmulatorAdminError', status: 400 });
    await expect(emu.admin.throttle('ListServices', { share: 2 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(emu.admin.setConfig({ statusMode: 'loud' as never })).rejects.toMatchObject({
      status: 400,
    });
    expect(await emu.admin.faults()).toEqual(before);
  });

  it('unknown admin routes answer 404', async () => {
    const emu = await start({});
    const res = await fetch(`${emu.url}/_emulator/nothing`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/no admin route/);
  });
});
