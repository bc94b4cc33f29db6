import { describe, expect, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import {
  createOperationTracker,
  type OperationResult,
} from '../../src/cloudmap/operation-tracker.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';
import { advance, settle } from '../helpers/async.js';
import { unlimited, FakeClock } from '../../src/testing/index.js';

const setup = () => {
  const clock = new FakeClock();
  const fake = createFakeCloudMap({ operationMode: 'manual' });
  fake.seedNamespace('demo');
  const svc = fake.seedService('demo', 'web');
  const client = createCloudMapClient(fake, {
    clock,
    limiter: unlimited,
    operations: { initialPollIntervalMs: 500, maxPollIntervalMs: 4_000, timeoutMs: 60_000 },
  });
  const results: OperationResult[] = [];
  client.operations.onComplete((r) => results.push(r));
  return { clock, fake, svc, client, results };
};

describe('operation tracking', () => {
  it('returns at once and reports the completion in the background', async () => {
    const { clock, fake, svc, client, results } = setup();
    const ref = await client.registerInstance(svc.id, 'i-1', {});
    // The write returned while the operation is still SUBMITTED: nobody waited on it.
    expect(client.operations.pending).toBe(1);
    expect(fake.calls('getOperation')).toBe(0);
    const waited = client.operations.wait(ref.operationId);
    await advance(clock, 2_000);
    expect(results).toEqual([]);
    fake.completeOperation(ref.operationId);
    await advance(clock, 5_000);
    expect(results).toMatchObject([
      {
        operationId: ref.operationId,
        status: 'SUCCESS',
        kind: 'registerInstance',
        serviceId: svc.id,
        instanceId: 'i-1',
      },
    ]);
    expect(await waited).toMatchObject({ status: 'SUCCESS', targets: { INSTANCE: 'i-1' } });
    expect(client.operations.pending).toBe(0);
    await client.close();
  });

  it('polls with a doubling interval up to the cap', async () => {
    const { clock, fake, svc, client } = setup();
    await client.registerInstance(svc.id, 'i-1', {});
    // Polls at 0.5, 1.5, 3.5, 7.5, 11.5, 15.5 s: 500 → 1000 → 2000 → 4000 (cap) → 4000 …
    await advance(clock, 16_000);
    expect(fake.calls('getOperation')).toBe(6);
    await client.close();
  });

  it('reports FAIL with the error code so the caller can requeue', async () => {
    const { clock, fake, svc, client, results } = setup();
    const ref = await client.deregisterInstance(svc.id, 'missing').catch(() => undefined);
    expect(ref).toBeUndefined(); // InstanceNotFound is synchronous, nothing to track
    const reg = await client.registerInstance(svc.id, 'i-1', {});
    fake.completeOperation(reg.operationId, 'FAIL', 'THROTTLED_REQUEST');
    await advance(clock, 1_000);
    expect(results).toMatchObject([{ status: 'FAIL', errorCode: 'THROTTLED_REQUEST' }]);
    await client.close();
  });

  it('keeps polling through poll errors and times out', async () => {
    const { clock, fake, svc, client, results } = setup();
    await client.registerInstance(svc.id, 'i-1', {});
    fake.failNext('getOperation', 'OperationNotFound', 2);
    await advance(clock, 61_000, 500);
    expect(results).toMatchObject([{ status: 'TIMEOUT' }]);
    expect(fake.calls('getOperation')).toBeGreaterThan(2);
    await client.close();
  });

  it('close completes pending operations as CANCELLED and stops polling', async () => {
    const { clock, fake, svc, client, results } = setup();
    await client.registerInstance(svc.id, 'i-1', {});
    await client.close();
    const calls = fake.calls('getOperation');
    await advance(clock, 10_000);
    expect(results).toMatchObject([{ status: 'CANCELLED' }]);
    expect(fake.calls('getOperation')).toBe(calls);
  });

  it('a completed operation evicts the service caches', async () => {
    const { clock, fake, svc, client } = setup();
    await client.registerInstance(svc.id, 'i-1', {});
    await client.listInstances(svc.id);
    await client.listInstances(svc.id);
    expect(fake.calls('listInstances')).toBe(1);
    fake.completeAllOperations();
    await advance(clock, 1_000);
    await client.listInstances(svc.id);
    expect(fake.calls('listInstances')).toBe(2);
    await client.close();
  });

  it('tracking the same id twice shares one result; a throwing listener does not break others', async () => {
    const clock = new FakeClock();
    const tracker = createOperationTracker({
      clock,
      getOperation: async (id) => ({ operationId: id, status: 'SUCCESS' }),
    });
    const seen: string[] = [];
    tracker.onComplete(() => {
      throw new Error('listener bug');
    });
    tracker.onComplete((r) => seen.push(r.operationId));
    const a = tracker.track({ operationId: 'op1', kind: 'registerInstance' });
    const b = tracker.track({ operationId: 'op1', kind: 'registerInstance' });
    expect(a).toBe(b);
    clock.advance(500);
    await settle();
    expect(seen).toEqual(['op1']);
    tracker.close();
  });
});
