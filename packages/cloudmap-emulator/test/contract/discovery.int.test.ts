import {
  CreateServiceCommand,
  DeregisterInstanceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  UpdateInstanceCustomHealthStatusCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect, it } from 'vitest';
import { httpNamespace, httpService, registerInstance, waitForOperation } from '../sdk.js';
import { contractSuite, expectAws, failure, type Target } from './harness.js';

async function register(
  t: Target,
  ServiceId: string,
  InstanceId: string,
  Attributes: Record<string, string>,
) {
  expect((await registerInstance(t.client, ServiceId, InstanceId, Attributes)).Status).toBe(
    'SUCCESS',
  );
}

async function deregister(t: Target, ServiceId: string, InstanceId: string) {
  const { OperationId } = await t.client.send(
    new DeregisterInstanceCommand({ ServiceId, InstanceId }),
  );
  expect((await waitForOperation(t.client, OperationId!)).Status).toBe('SUCCESS');
}

contractSuite('discovery', (target) => {
  const discover = (
    input: Omit<
      ConstructorParameters<typeof DiscoverInstancesCommand>[0],
      'NamespaceName' | 'ServiceName'
    >,
  ) =>
    target().client.send(
      new DiscoverInstancesCommand({ NamespaceName: 'disc', ServiceName: 'web', ...input }),
    );
  const ids = (r: Awaited<ReturnType<typeof discover>>) =>
    (r.Instances ?? []).map((i) => i.InstanceId).sort();
  const setup = async () => {
    const svc = await httpService(
      target().client,
      await httpNamespace(target().client, 'disc'),
      'web',
    );
    await register(target(), svc, 'a', { zone: 'z1', tier: 'gold' });
    await register(target(), svc, 'b', { zone: 'z1', tier: 'silver' });
    await register(target(), svc, 'c', { zone: 'z2', tier: 'gold' });
    return svc;
  };

  it('QueryParameters keep only instances matching every pair', async () => {
    await setup();
    expect(ids(await discover({ QueryParameters: { zone: 'z1' } }))).toEqual(['a', 'b']);
    expect(ids(await discover({ QueryParameters: { zone: 'z1', tier: 'gold' } }))).toEqual(['a']);
    expect(ids(await discover({ QueryParameters: { zone: 'z9' } }))).toEqual([]);
  });

  it('OptionalParameters narrow when something matches and are ignored otherwise', async () => {
    await setup();
    expect(
      ids(
        await discover({ QueryParameters: { zone: 'z1' }, OptionalParameters: { tier: 'gold' } }),
      ),
    ).toEqual(['a']);
    expect(
      ids(
        await discover({ QueryParameters: { zone: 'z1' }, OptionalParameters: { tier: 'bronze' } }),
      ),
    ).toEqual(['a', 'b']);
  });

  it('MaxResults truncates and there is no NextToken', async () => {
    await setup();
    const r = await discover({ MaxResults: 2 });
    expect(r.Instances).toHaveLength(2);
    expect(Object.keys(r)).not.toContain('NextToken');
  });

  it('answers with the namespace HttpName, the service name and all attributes', async () => {
    await setup();
    const r = await discover({ QueryParameters: { tier: 'silver' } });
    expect(r.Instances).toEqual([
      expect.objectContaining({
        InstanceId: 'b',
        NamespaceName: 'disc',
        ServiceName: 'web',
        Attributes: { zone: 'z1', tier: 'silver' },
      }),
    ]);
  });

  it('an unknown namespace is NamespaceNotFound and an unknown service ServiceNotFound', async () => {
    await setup();
    const { client } = target();
    expect(
      (
        await failure(
          client.send(new DiscoverInstancesCommand({ NamespaceName: 'nope', ServiceName: 'web' })),
        )
      ).name,
    ).toBe('NamespaceNotFound');
    expect(
      (
        await failure(
          client.send(new DiscoverInstancesCommand({ NamespaceName: 'disc', ServiceName: 'nope' })),
        )
      ).name,
    ).toBe('ServiceNotFound');
  });

  it('without a health check HealthStatus is ignored and instances report UNKNOWN', async () => {
    await setup();
    const r = await discover({ HealthStatus: 'HEALTHY' });
    expect(ids(r)).toEqual(['a', 'b', 'c']);
    const statuses = new Set(r.Instances?.map((i) => i.HealthStatus));
    await expectAws(target(), async () => expect([...statuses]).toEqual(['UNKNOWN']), {
      name: 'health-status-always-healthy',
      moto: async () => expect([...statuses]).toEqual(['HEALTHY']),
    });
  });

  it('custom health: AWS_INIT_HEALTH_STATUS, HEALTHY, UNHEALTHY and HEALTHY_OR_ELSE_ALL', async () => {
    const { client } = target();
    const ns = await httpNamespace(client, 'disc');
    const { Service } = await client.send(
      new CreateServiceCommand({ Name: 'web', NamespaceId: ns, HealthCheckCustomConfig: {} }),
    );
    await register(target(), Service!.Id!, 'up', {});
    await register(target(), Service!.Id!, 'down', { AWS_INIT_HEALTH_STATUS: 'UNHEALTHY' });
    const healthy = ids(await discover({ HealthStatus: 'HEALTHY' }));
    const unhealthy = ids(await discover({ HealthStatus: 'UNHEALTHY' }));
    await expectAws(
      target(),
      async () => {
        expect(healthy).toEqual(['up']);
        expect(unhealthy).toEqual(['down']);
      },
      {
        name: 'health-status-always-healthy',
        moto: async () => {
          expect(healthy).toEqual(['down', 'up']);
          expect(unhealthy).toEqual([]);
        },
      },
    );
    await client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId: Service!.Id,
        InstanceId: 'up',
        Status: 'UNHEALTHY',
      }),
    );
    // Nothing healthy any more: HEALTHY_OR_ELSE_ALL fails open to every instance.
    const failOpen = ids(await discover({ HealthStatus: 'HEALTHY_OR_ELSE_ALL' }));
    await expectAws(target(), async () => expect(failOpen).toEqual(['down', 'up']), {
      name: 'health-status-always-healthy',
      moto: async () => expect(failOpen).toEqual(['down']),
    });
  });

  it('InstancesRevision only increases, through registrations and deregistrations', async () => {
    const { client } = target();
    const svc = await setup();
    const revision = async () =>
      (
        await client.send(
          new DiscoverInstancesRevisionCommand({ NamespaceName: 'disc', ServiceName: 'web' }),
        )
      ).InstancesRevision!;
    const seen = [await revision()];
    await deregister(target(), svc, 'c');
    seen.push(await revision());
    await register(target(), svc, 'c', { zone: 'z2', tier: 'gold' });
    seen.push(await revision());
    await deregister(target(), svc, 'a');
    seen.push(await revision());
    const increasing = seen.every((r, i) => i === 0 || r > seen[i - 1]!);
    await expectAws(
      target(),
      async () => {
        expect(increasing).toBe(true);
        expect((await discover({})).InstancesRevision).toBe(seen.at(-1));
      },
      { name: 'revision-not-monotonic', moto: async () => expect(increasing).toBe(false) },
    );
  });
});
