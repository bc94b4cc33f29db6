import { describe, expect, it } from 'vitest';
import {
  createHttpNamespace,
  deleteNamespace,
  listNamespaces,
} from '../src/handlers/namespaces.js';
import { createService } from '../src/handlers/services.js';
import {
  deregisterInstance,
  registerInstance,
  updateInstanceCustomHealthStatus,
} from '../src/handlers/instances.js';
import { discoverInstancesRevision } from '../src/handlers/discovery.js';
import { getOperation } from '../src/handlers/operations.js';
import { codeOf, engineAt } from './engine-at.js';

describe('engine: asynchronous operations', () => {
  it('SUBMITTED for the first half of the delay, PENDING for the second, then SUCCESS', () => {
    const { engine, tick } = engineAt(100);
    const { OperationId } = createHttpNamespace(engine, { Name: 'n' }) as { OperationId: string };
    const status = () =>
      (getOperation(engine, { OperationId }) as { Operation: { Status: string } }).Operation.Status;
    expect(status()).toBe('SUBMITTED');
    tick(50);
    expect(status()).toBe('PENDING');
    expect((listNamespaces(engine, {}) as { Namespaces: unknown[] }).Namespaces).toEqual([]);
    tick(50);
    expect(status()).toBe('SUCCESS');
    expect((listNamespaces(engine, {}) as { Namespaces: unknown[] }).Namespaces).toHaveLength(1);
  });

  it('a delete while another delete runs is DuplicateRequest', () => {
    const { engine, tick } = engineAt(100);
    createHttpNamespace(engine, { Name: 'n' });
    tick(100);
    const id = Object.keys(engine.state.namespaces)[0]!;
    const first = deleteNamespace(engine, { Id: id }) as { OperationId: string };
    expect(first.OperationId).toMatch(/^[a-z0-9]{32}-[a-z0-9]{8}$/);
    expect(codeOf(() => deleteNamespace(engine, { Id: id }))).toBe('DuplicateRequest');
    tick(100);
    expect(codeOf(() => deleteNamespace(engine, { Id: id }))).toBe('NamespaceNotFound');
  });

  it('revisions come from one counter: a recreated service never shows a lower revision', () => {
    const { engine, tick } = engineAt(0);
    createHttpNamespace(engine, { Name: 'n' });
    const nsId = Object.keys(engine.state.namespaces)[0]!;
    const svc = (
      createService(engine, { Name: 's', NamespaceId: nsId }) as { Service: { Id: string } }
    ).Service.Id;
    const rev = () =>
      (
        discoverInstancesRevision(engine, { NamespaceName: 'n', ServiceName: 's' }) as {
          InstancesRevision: number;
        }
      ).InstancesRevision;
    const r0 = rev();
    registerInstance(engine, { ServiceId: svc, InstanceId: 'i', Attributes: {} });
    tick(1);
    const r1 = rev();
    deregisterInstance(engine, { ServiceId: svc, InstanceId: 'i' });
    tick(1);
    const r2 = rev();
    delete engine.state.services[svc];
    createService(engine, { Name: 's', NamespaceId: nsId });
    const r3 = rev();
    expect(r1).toBeGreaterThan(r0);
    expect(r2).toBeGreaterThan(r1);
    expect(r3).toBeGreaterThan(r2);
  });

  it('custom health changes do not move the revision; a service without custom health has none to change', () => {
    const { engine, tick } = engineAt(0);
    createHttpNamespace(engine, { Name: 'n' });
    const nsId = Object.keys(engine.state.namespaces)[0]!;
    const custom = (
      createService(engine, { Name: 'c', NamespaceId: nsId, HealthCheckCustomConfig: {} }) as {
        Service: { Id: string };
      }
    ).Service.Id;
    const plain = (
      createService(engine, { Name: 'p', NamespaceId: nsId }) as { Service: { Id: string } }
    ).Service.Id;
    registerInstance(engine, { ServiceId: custom, InstanceId: 'i', Attributes: {} });
    registerInstance(engine, { ServiceId: plain, InstanceId: 'i', Attributes: {} });
    tick(1);
    const rev = () =>
      (
        discoverInstancesRevision(engine, { NamespaceName: 'n', ServiceName: 'c' }) as {
          InstancesRevision: number;
        }
      ).InstancesRevision;
    const before = rev();
    updateInstanceCustomHealthStatus(engine, {
      ServiceId: custom,
      InstanceId: 'i',
      Status: 'UNHEALTHY',
    });
    expect(rev()).toBe(before);
    expect(engine.state.instances[custom]!['i']!.customHealth).toBe('UNHEALTHY');
    expect(
      codeOf(() =>
        updateInstanceCustomHealthStatus(engine, {
          ServiceId: plain,
          InstanceId: 'i',
          Status: 'HEALTHY',
        }),
      ),
    ).toBe('CustomHealthNotFound');
  });

  it('the instances-per-namespace quota counts every service of the namespace, replacements excepted', () => {
    const { engine, tick } = engineAt(0);
    engine.options.quotas.instancesPerNamespace = 2;
    createHttpNamespace(engine, { Name: 'n' });
    const nsId = Object.keys(engine.state.namespaces)[0]!;
    const a = (
      createService(engine, { Name: 'a', NamespaceId: nsId }) as { Service: { Id: string } }
    ).Service.Id;
    const b = (
      createService(engine, { Name: 'b', NamespaceId: nsId }) as { Service: { Id: string } }
    ).Service.Id;
    registerInstance(engine, { ServiceId: a, InstanceId: '1', Attributes: {} });
    registerInstance(engine, { ServiceId: b, InstanceId: '1', Attributes: {} });
    tick(1);
    expect(
      codeOf(() => registerInstance(engine, { ServiceId: b, InstanceId: '2', Attributes: {} })),
    ).toBe('ResourceLimitExceeded');
    expect(
      codeOf(() =>
        registerInstance(engine, { ServiceId: b, InstanceId: '1', Attributes: { v: '2' } }),
      ),
    ).toBe('OK');
  });
});
