// The CloudMapServiceImport controller over a scripted Cloud Map read and an in-memory status
// writer: converged state (what exportFor answers, what the status says), not call sequences.
import {
  CloudMapError,
  createAddressPolicy,
  createLocalAddresses,
  type CloudMapInstance,
} from '@cloudmap-mcs/core';
import {
  createMemoryEventRecorder,
  createMemoryLogger,
  drainQueue,
  FakeClock,
} from '@cloudmap-mcs/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createExternalImports, type ExternalImports } from '../src/external/controller.js';
import type { ExternalObject, ExternalStatus } from '../src/external/types.js';

const started: ExternalImports[] = [];
afterEach(async () => {
  for (const imports of started.splice(0)) await imports.stop();
});

function setup(opts: { exported?: boolean } = {}) {
  const clock = new FakeClock();
  let answer: CloudMapInstance[] | Error = [];
  const statuses = new Map<string, ExternalStatus>();
  let writes = 0;
  const changed: string[] = [];
  const events = createMemoryEventRecorder();
  const imports = createExternalImports({
    cloudMap: {
      discoverInstances: async () => {
        if (answer instanceof Error) throw answer;
        return { instances: answer, revision: 1 };
      },
    },
    trust: {
      clustersetId: 'set-1',
      localClusterId: 'c1',
      addresses: createAddressPolicy([], createLocalAddresses()),
    },
    clock,
    now: () => 1_700_000_000_000,
    logger: createMemoryLogger(),
    periodMs: 10_000,
    status: {
      writeStatus: async (ns, name, status) => {
        writes += 1;
        statuses.set(`${ns}/${name}`, status);
      },
    },
    events,
    exportedByClusterset: () => opts.exported ?? false,
    onChange: (key) => changed.push(key),
  });
  imports.start();
  started.push(imports);
  return {
    imports,
    /** What the controller does now (a new selection is read at once). */
    settle: () => drainQueue(imports.queue),
    /** One period later: every selection is read again. */
    nextPeriod: async () => {
      clock.advance(10_000);
      await drainQueue(imports.queue);
    },
    events,
    changed,
    statuses,
    writes: () => writes,
    answer: (a: CloudMapInstance[] | Error) => {
      answer = a;
    },
  };
}

const obj = (generation = 1, service = 'payments'): ExternalObject => ({
  metadata: { name: 'payments', namespace: 'shop', generation, uid: 'u1' },
  spec: { cloudMap: { namespace: 'ecs', service } },
});
const task = (id: string, ip: string, health: CloudMapInstance['health'] = 'HEALTHY') => ({
  id,
  attributes: { AWS_INSTANCE_IPV4: ip, AWS_INSTANCE_PORT: '8080' },
  health,
});
const ready = (s: ExternalStatus | undefined) => s?.conditions?.find((c) => c.type === 'Ready');

describe('external imports controller', () => {
  it('imports on selection, follows health, keeps the last good read when the service goes, drops it when the selection goes', async () => {
    const t = setup();
    t.answer([task('a', '10.0.0.1'), task('b', '10.0.0.2', 'UNHEALTHY')]);
    t.imports.upsert(obj());
    await t.settle();
    expect(t.changed).toEqual(['shop/payments']);
    const exp = t.imports.exportFor('shop', 'payments');
    expect(exp?.endpoints.map((e) => [e.address, e.conditions.ready])).toEqual([
      ['10.0.0.1', true],
      ['10.0.0.2', false],
    ]);
    expect(ready(t.statuses.get('shop/payments'))).toMatchObject({
      status: 'True',
      reason: 'Imported',
    });
    expect(t.statuses.get('shop/payments')?.instances).toEqual({
      healthy: 1,
      unhealthy: 1,
      refused: 0,
    });

    // Nothing changed: no notification, no status write.
    const writes = t.writes();
    await t.nextPeriod();
    expect(t.changed).toHaveLength(1);
    expect(t.writes()).toBe(writes);

    // Health flips (the revision would not move): the export follows.
    t.answer([task('a', '10.0.0.1'), task('b', '10.0.0.2', 'HEALTHY')]);
    await t.nextPeriod();
    expect(t.changed).toHaveLength(2);
    expect(
      t.imports.exportFor('shop', 'payments')?.endpoints.every((e) => e.conditions.ready),
    ).toBe(true);

    // The service is gone from Cloud Map: the endpoints stay, the condition says so.
    t.answer(new CloudMapError('ServiceNotFound', 'Service not found', 'discoverInstances'));
    await t.nextPeriod();
    expect(t.imports.exportFor('shop', 'payments')?.endpoints).toHaveLength(2);
    expect(ready(t.statuses.get('shop/payments'))).toMatchObject({
      status: 'False',
      reason: 'ServiceNotFound',
    });
    expect(ready(t.statuses.get('shop/payments'))?.message).toMatch(/keeping the 2 endpoint/);
    expect(t.events.events.map((e) => e.reason)).toEqual(['ServiceNotFound']);

    // The selection removed: the import goes.
    t.imports.remove('shop', 'payments');
    expect(t.changed.at(-1)).toBe('shop/payments');
    expect(t.imports.exportFor('shop', 'payments')).toBeUndefined();
  });

  it('a changed selection drops what the old one read', async () => {
    const t = setup();
    t.answer([task('a', '10.0.0.1')]);
    t.imports.upsert(obj(1));
    await t.settle();
    t.answer(new CloudMapError('ServiceNotFound', 'Service not found', 'discoverInstances'));
    t.imports.upsert(obj(2, 'other'));
    await t.settle();
    expect(t.imports.exportFor('shop', 'payments')).toBeUndefined();
    expect(ready(t.statuses.get('shop/payments'))).toMatchObject({ reason: 'ServiceNotFound' });
    expect(t.statuses.get('shop/payments')?.observedGeneration).toBe(2);
  });

  it('an unreachable Cloud Map keeps the import and says so', async () => {
    const t = setup();
    t.answer([task('a', '10.0.0.1')]);
    t.imports.upsert(obj());
    await t.settle();
    t.answer(new CloudMapError('ThrottlingException', 'Rate exceeded', 'discoverInstances'));
    await t.nextPeriod();
    expect(t.imports.exportFor('shop', 'payments')?.endpoints).toHaveLength(1);
    expect(ready(t.statuses.get('shop/payments'))?.reason).toBe('CloudMapUnreachable');
  });

  it('a key the clusterset exports is a Conflict and imports nothing from here', async () => {
    const t = setup({ exported: true });
    t.answer([task('a', '10.0.0.1')]);
    t.imports.upsert(obj());
    await t.settle();
    expect(t.imports.exportFor('shop', 'payments')).toBeUndefined();
    expect(ready(t.statuses.get('shop/payments'))?.reason).toBe('Conflict');
  });

  it('a denied namespace imports nothing', async () => {
    const t = setup();
    t.imports.upsert({ ...obj(), metadata: { ...obj().metadata, namespace: 'kube-system' } });
    await t.settle();
    expect(t.imports.exportFor('kube-system', 'payments')).toBeUndefined();
    expect(ready(t.statuses.get('kube-system/payments'))?.reason).toBe('NamespaceDenied');
  });
});
