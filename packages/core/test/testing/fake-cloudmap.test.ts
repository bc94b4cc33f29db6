import { describe, expect, it } from 'vitest';
import { CloudMapError, isCloudMapError } from '../../src/ports/cloudmap-port.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';

const setup = () => {
  const fake = createFakeCloudMap();
  const ns = fake.seedNamespace('demo');
  const svc = fake.seedService('demo', 'web');
  return { fake, ns, svc };
};

describe('fake Cloud Map semantics', () => {
  it('register is create-or-replace and bumps the revision each time', async () => {
    const { fake, svc } = setup();
    const r0 = await fake.discoverInstancesRevision('demo', 'web');
    await fake.registerInstance(svc.id, 'i-1', { a: '1', b: '2' });
    const r1 = await fake.discoverInstancesRevision('demo', 'web');
    await fake.registerInstance(svc.id, 'i-1', { a: '3' });
    const r2 = await fake.discoverInstancesRevision('demo', 'web');
    expect(await fake.listInstances(svc.id)).toEqual([{ id: 'i-1', attributes: { a: '3' } }]);
    expect(r1).toBeGreaterThan(r0);
    expect(r2).toBeGreaterThan(r1);
  });

  it('revision never goes back when a service is deleted and re-created', async () => {
    const { fake, ns, svc } = setup();
    await fake.registerInstance(svc.id, 'i-1', {});
    const before = await fake.discoverInstancesRevision('demo', 'web');
    await fake.deregisterInstance(svc.id, 'i-1');
    await fake.deleteService(svc.id);
    await fake.createService(ns.id, 'web', {});
    expect(await fake.discoverInstancesRevision('demo', 'web')).toBeGreaterThan(before);
  });

  it('discover filters by exact attribute match (AND)', async () => {
    const { fake, svc } = setup();
    await fake.registerInstance(svc.id, 'a', { cluster: 'c1', kind: 'ep' });
    await fake.registerInstance(svc.id, 'b', { cluster: 'c2', kind: 'ep' });
    await fake.registerInstance(svc.id, 'c', { cluster: 'c1', kind: 'export' });
    const { instances } = await fake.discoverInstances('demo', 'web', {
      cluster: 'c1',
      kind: 'ep',
    });
    expect(instances.map((i) => i.id)).toEqual(['a']);
  });

  it.each([
    [
      'listInstances',
      (f: ReturnType<typeof setup>['fake']) => f.listInstances('srv-x'),
      'ServiceNotFound',
    ],
    [
      'discover unknown namespace',
      (f: ReturnType<typeof setup>['fake']) => f.discoverInstances('nope', 'web'),
      'NamespaceNotFound',
    ],
    [
      'discover unknown service',
      (f: ReturnType<typeof setup>['fake']) => f.discoverInstancesRevision('demo', 'nope'),
      'ServiceNotFound',
    ],
    [
      'getOperation',
      (f: ReturnType<typeof setup>['fake']) => f.getOperation('op-x'),
      'OperationNotFound',
    ],
    [
      'createService in missing namespace',
      (f: ReturnType<typeof setup>['fake']) => f.createService('ns-x', 'a', {}),
      'NamespaceNotFound',
    ],
    [
      'createService twice',
      (f: ReturnType<typeof setup>['fake']) =>
        f.createService(f.namespaceByName('demo')?.id ?? '', 'web', {}),
      'ServiceAlreadyExists',
    ],
    [
      'createHttpNamespace twice',
      (f: ReturnType<typeof setup>['fake']) => f.createHttpNamespace('demo', {}),
      'NamespaceAlreadyExists',
    ],
    [
      'register with a 65-char id',
      (f: ReturnType<typeof setup>['fake']) =>
        f.registerInstance(f.serviceByName('demo', 'web')?.id ?? '', 'x'.repeat(65), {}),
      'InvalidInput',
    ],
    [
      'register 31 custom attributes',
      (f: ReturnType<typeof setup>['fake']) =>
        f.registerInstance(
          f.serviceByName('demo', 'web')?.id ?? '',
          'i',
          Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, 'v'])),
        ),
      'InvalidInput',
    ],
    [
      'deregister missing instance',
      (f: ReturnType<typeof setup>['fake']) =>
        f.deregisterInstance(f.serviceByName('demo', 'web')?.id ?? '', 'i'),
      'InstanceNotFound',
    ],
  ] as const)('%s fails with %s', async (_name, run, code) => {
    const { fake } = setup();
    const error: unknown = await run(fake).catch((e: unknown) => e);
    expect(isCloudMapError(error, code)).toBe(true);
  });

  it('refuses to delete a service that still has instances', async () => {
    const { fake, svc } = setup();
    await fake.registerInstance(svc.id, 'i-1', {});
    await expect(fake.deleteService(svc.id)).rejects.toMatchObject({ code: 'ResourceInUse' });
  });

  it('createHttpNamespace returns an operation whose target shows up in listNamespaces', async () => {
    const fake = createFakeCloudMap();
    const ref = await fake.createHttpNamespace('team-a', { owner: 'mcs' });
    expect((await fake.getOperation(ref.operationId)).status).toBe('SUCCESS');
    const ns = (await fake.listNamespaces()).find((n) => n.name === 'team-a');
    expect(ns?.type).toBe('HTTP');
    expect(fake.tagsOf(ns?.id ?? '')).toEqual({ owner: 'mcs' });
  });

  it('createService with the same creator request id is idempotent', async () => {
    const { fake, ns } = setup();
    const a = await fake.createService(ns.id, 'api', {}, 'req-1');
    const b = await fake.createService(ns.id, 'api', {}, 'req-1');
    expect(b.id).toBe(a.id);
  });
});

describe('fake Cloud Map switches and counters', () => {
  it('fails a named operation N times with the chosen code, then succeeds', async () => {
    const { fake, svc } = setup();
    fake.failNext('registerInstance', 'ThrottlingException', 2);
    const e1: unknown = await fake.registerInstance(svc.id, 'i', {}).catch((e: unknown) => e);
    const e2: unknown = await fake.registerInstance(svc.id, 'i', {}).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(CloudMapError);
    expect(e1).toMatchObject({
      code: 'ThrottlingException',
      retryable: true,
      operation: 'registerInstance',
    });
    expect(e2).toMatchObject({ code: 'ThrottlingException' });
    await fake.registerInstance(svc.id, 'i', {});
    expect(fake.instancesOf('demo', 'web')).toHaveLength(1);
    expect(fake.calls('registerInstance')).toBe(3);
    expect(fake.failures('registerInstance')).toBe(2);
  });

  it('a failed write changes nothing', async () => {
    const { fake, svc } = setup();
    fake.failNext('registerInstance', 'ServiceUnavailable');
    await expect(fake.registerInstance(svc.id, 'i', {})).rejects.toMatchObject({ retryable: true });
    expect(fake.instancesOf('demo', 'web')).toEqual([]);
  });

  it('failAlways holds until cleared; other operations are unaffected', async () => {
    const { fake } = setup();
    fake.failAlways('listNamespaces', 'AccessDeniedException');
    await expect(fake.listNamespaces()).rejects.toMatchObject({
      code: 'AccessDeniedException',
      retryable: false,
    });
    await expect(fake.listNamespaces()).rejects.toMatchObject({ code: 'AccessDeniedException' });
    await expect(fake.discoverInstancesRevision('demo', 'web')).resolves.toBeTypeOf('number');
    fake.clearFaults('listNamespaces');
    await expect(fake.listNamespaces()).resolves.toHaveLength(1);
  });

  it('counts reads and writes separately; seeding is not counted', async () => {
    const { fake, svc } = setup();
    expect(fake.total).toBe(0);
    await fake.listInstances(svc.id);
    await fake.discoverInstances('demo', 'web');
    await fake.registerInstance(svc.id, 'i', {});
    expect({ reads: fake.reads, writes: fake.writes }).toEqual({ reads: 2, writes: 1 });
    expect(fake.snapshot()).toEqual({
      listInstances: 1,
      discoverInstances: 1,
      registerInstance: 1,
    });
    fake.resetCounters();
    expect(fake.total).toBe(0);
  });

  it('operations can be failed asynchronously, leaving state unchanged', async () => {
    const { fake, svc } = setup();
    fake.failNextOperations(1, 'THROTTLED_REQUEST');
    const ref = await fake.registerInstance(svc.id, 'i', {});
    expect(await fake.getOperation(ref.operationId)).toMatchObject({
      status: 'FAIL',
      errorCode: 'THROTTLED_REQUEST',
    });
    expect(fake.instancesOf('demo', 'web')).toEqual([]);
    const ok = await fake.registerInstance(svc.id, 'i', {});
    expect((await fake.getOperation(ok.operationId)).status).toBe('SUCCESS');
  });

  it('manual mode keeps operations SUBMITTED until completed', async () => {
    const fake = createFakeCloudMap({ operationMode: 'manual' });
    fake.seedNamespace('demo');
    const svc = fake.seedService('demo', 'web');
    const ref = await fake.registerInstance(svc.id, 'i', {});
    expect((await fake.getOperation(ref.operationId)).status).toBe('SUBMITTED');
    fake.completeOperation(ref.operationId, 'FAIL', 'INTERNAL_FAILURE');
    expect(await fake.getOperation(ref.operationId)).toMatchObject({
      status: 'FAIL',
      errorCode: 'INTERNAL_FAILURE',
    });
  });
});
