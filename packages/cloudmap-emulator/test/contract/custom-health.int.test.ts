// Custom health status flows, as ECS drives them and the import agent reads them (ADR 0014):
// UpdateInstanceCustomHealthStatus changes what DiscoverInstances and GetInstancesHealthStatus
// report, does not move InstancesRevision, and fails clearly where there is no custom health.
import {
  CreateServiceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  GetInstancesHealthStatusCommand,
  UpdateInstanceCustomHealthStatusCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, registerInstance } from '../sdk.js';
import { contractSuite, expectAws, failure } from './harness.js';

contractSuite('custom health status', (target) => {
  const ecsService = async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'ecs');
    const { Service } = await client.send(
      new CreateServiceCommand({ Name: 'tasks', NamespaceId: ns, HealthCheckCustomConfig: {} }),
    );
    for (const [id, init] of [
      ['t1', 'HEALTHY'],
      ['t2', 'UNHEALTHY'],
    ] as const)
      await registerInstance(client, Service!.Id!, id, {
        AWS_INSTANCE_IPV4: `10.0.0.${id.slice(1)}`,
        AWS_INSTANCE_PORT: '8080',
        AWS_INIT_HEALTH_STATUS: init,
      });
    return Service!.Id!;
  };
  const health = async () =>
    Object.fromEntries(
      (
        (
          await target().client.send(
            new DiscoverInstancesCommand({
              NamespaceName: 'ecs',
              ServiceName: 'tasks',
              HealthStatus: 'ALL',
            }),
          )
        ).Instances ?? []
      ).map((i) => [i.InstanceId, i.HealthStatus]),
    );
  const revision = async () =>
    (
      await target().client.send(
        new DiscoverInstancesRevisionCommand({ NamespaceName: 'ecs', ServiceName: 'tasks' }),
      )
    ).InstancesRevision;

  it('UpdateInstanceCustomHealthStatus flips what DiscoverInstances reports, without moving the revision', async () => {
    const { client } = target();
    const ServiceId = await ecsService();
    const before = await health();
    const rev = await revision();
    await client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId,
        InstanceId: 't2',
        Status: 'HEALTHY',
      }),
    );
    await client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId,
        InstanceId: 't1',
        Status: 'UNHEALTHY',
      }),
    );
    const after = await health();
    const status = (await client.send(new GetInstancesHealthStatusCommand({ ServiceId }))).Status;
    const revAfter = await revision();
    // AWS starts from AWS_INIT_HEALTH_STATUS; moto ignores it. Both follow the updates.
    await expectAws(
      target(),
      async () => expect(before).toEqual({ t1: 'HEALTHY', t2: 'UNHEALTHY' }),
      {
        name: 'health-status-always-healthy',
        moto: async () => expect(before).toEqual({ t1: 'HEALTHY', t2: 'HEALTHY' }),
      },
    );
    expect(after).toEqual({ t1: 'UNHEALTHY', t2: 'HEALTHY' });
    expect(status).toEqual({ t1: 'UNHEALTHY', t2: 'HEALTHY' });
    expect(revAfter).toBe(rev);
  });

  it('is CustomHealthNotFound without HealthCheckCustomConfig and InstanceNotFound for an unknown instance', async () => {
    const { client } = target();
    const ServiceId = await ecsService();
    const plain = await httpService(client, await httpNamespace(client, 'plain'), 'web');
    await registerInstance(client, plain, 'p1', { AWS_INSTANCE_IPV4: '10.0.1.1' });
    const noCustom = await failure(
      client.send(
        new UpdateInstanceCustomHealthStatusCommand({
          ServiceId: plain,
          InstanceId: 'p1',
          Status: 'UNHEALTHY',
        }),
      ),
    ).catch((e: unknown) => ({ name: 'succeeded', status: undefined, error: e }));
    const unknown = await failure(
      client.send(
        new UpdateInstanceCustomHealthStatusCommand({
          ServiceId,
          InstanceId: 'no-such-task',
          Status: 'UNHEALTHY',
        }),
      ),
    ).catch((e: unknown) => ({ name: 'succeeded', status: undefined, error: e }));
    expect(unknown.name).toBe('InstanceNotFound');
    await expectAws(target(), async () => expect(noCustom.name).toBe('CustomHealthNotFound'), {
      name: 'custom-health-not-required',
      moto: async () => expect(noCustom.name).toBe('succeeded'),
    });
  });

  it('a Status other than HEALTHY or UNHEALTHY is InvalidInput and changes nothing', async () => {
    const { client } = target();
    const ServiceId = await ecsService();
    const before = await health();
    const bad = await failure(
      client.send(
        new UpdateInstanceCustomHealthStatusCommand({
          ServiceId,
          InstanceId: 't1',
          Status: 'UNKNOWN' as 'HEALTHY',
        }),
      ),
    );
    await expectAws(target(), async () => expect(bad.name).toBe('InvalidInput'), {
      name: 'custom-health-bad-status',
      moto: async () => expect(bad.name).toBe('CustomHealthNotFound'),
    });
    expect(await health()).toEqual(before);
  });
});
