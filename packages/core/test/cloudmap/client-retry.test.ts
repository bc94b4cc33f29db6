import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createCloudMapClient, type CloudMapClientOptions } from '../../src/cloudmap/client.js';
import { createCloudMapMetrics } from '../../src/cloudmap/metrics.js';
import { CloudMapError, isCloudMapError } from '../../src/ports/cloudmap-port.js';
import { createFakeCloudMap } from '../../src/testing/fake-cloudmap.js';
import { advance, settle } from '../helpers/async.js';
import { unlimited, FakeClock } from '../../src/testing/index.js';

const setup = (opts: CloudMapClientOptions = {}) => {
  const clock = new FakeClock();
  const registry = new Registry();
  const fake = createFakeCloudMap();
  fake.seedNamespace('demo');
  const svc = fake.seedService('demo', 'web');
  const client = createCloudMapClient(fake, {
    clock,
    limiter: unlimited,
    random: () => 0.5,
    metrics: createCloudMapMetrics(registry),
    ...opts,
  });
  const value = async (name: string, labels: Record<string, string>) =>
    (await registry.getSingleMetric(name)?.get())?.values.find((v) =>
      Object.entries(labels).every(([k, l]) => v.labels[k] === l),
    )?.value ?? 0;
  return { clock, fake, svc, client, value };
};

describe('Cloud Map client retries', () => {
  it('retries throttling with backoff until it succeeds, and counts it', async () => {
    const { clock, fake, svc, client, value } = setup();
    fake.failNext('registerInstance', 'ThrottlingException', 2);
    let settled = false;
    const p = client.registerInstance(svc.id, 'i-1', { a: '1' }).finally(() => (settled = true));
    await settle();
    expect(settled).toBe(false); // waiting on the jittered backoff, not hammering
    expect(fake.calls('registerInstance')).toBe(1);
    await advance(clock, 2_000);
    await p;
    expect(fake.calls('registerInstance')).toBe(3);
    expect(fake.instancesOf('demo', 'web')).toHaveLength(1);
    expect(await value('mcs_cloudmap_throttles_total', { operation: 'registerInstance' })).toBe(2);
    expect(await value('mcs_cloudmap_retries_total', { operation: 'registerInstance' })).toBe(2);
    expect(
      await value('mcs_cloudmap_calls_total', {
        operation: 'registerInstance',
        outcome: 'success',
      }),
    ).toBe(1);
    expect(
      await value('mcs_cloudmap_calls_total', {
        operation: 'registerInstance',
        outcome: 'ThrottlingException',
      }),
    ).toBe(2);
    await client.close();
  });

  it('waits the full-jitter delay: throttles back off from 500 ms, 5xx from 100 ms', async () => {
    const { clock, fake, svc, client } = setup({ random: () => 0.999 });
    fake.failNext('listInstances', 'RequestLimitExceeded');
    const p = client.listInstances(svc.id);
    await advance(clock, 490, 10);
    expect(fake.calls('listInstances')).toBe(1);
    await advance(clock, 20, 10);
    expect(fake.calls('listInstances')).toBe(2);
    await p;
    fake.failNext('discoverInstancesRevision', 'ServiceUnavailable');
    const q = client.discoverInstancesRevision('demo', 'web');
    await advance(clock, 90, 10);
    expect(fake.calls('discoverInstancesRevision')).toBe(1);
    await advance(clock, 20, 10);
    await q;
    expect(fake.calls('discoverInstancesRevision')).toBe(2);
    await client.close();
  });

  it('does not retry errors a retry cannot fix', async () => {
    const { fake, client } = setup();
    const e: unknown = await client.listInstances('srv-missing').catch((x: unknown) => x);
    expect(isCloudMapError(e, 'ServiceNotFound')).toBe(true);
    expect(fake.calls('listInstances')).toBe(1);
    await client.close();
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { clock, fake, client } = setup({ retry: { maxAttempts: 3 } });
    fake.failAlways('listNamespaces', 'ServiceUnavailable');
    const p = client.listNamespaces().catch((x: unknown) => x);
    await advance(clock, 10_000);
    expect(isCloudMapError(await p, 'ServiceUnavailable')).toBe(true);
    expect(fake.calls('listNamespaces')).toBe(3);
    await client.close();
  });

  it('close aborts a retry wait', async () => {
    const { fake, client } = setup();
    fake.failAlways('listNamespaces', 'ThrottlingException');
    const p = client.listNamespaces().catch((x: unknown) => x);
    await settle();
    await client.close();
    expect(isCloudMapError(await p, 'ThrottlingException')).toBe(true);
    expect(fake.calls('listNamespaces')).toBe(1);
  });

  it('makes a retried createService idempotent with a generated creator request id', async () => {
    const { clock, fake, client } = setup();
    const ns = fake.namespaceByName('demo');
    // The first attempt creates the service, then the answer is lost (a 5xx after the fact).
    const real = fake.createService.bind(fake);
    let first = true;
    const port = {
      ...fake,
      createService: async (...args: Parameters<typeof fake.createService>) => {
        const svc = await real(...args);
        if (first) {
          first = false;
          throw new CloudMapError('ServiceUnavailable', 'lost', 'createService', {
            retryable: true,
          });
        }
        return svc;
      },
    };
    const c2 = createCloudMapClient(port, { clock, limiter: unlimited, random: () => 0.5 });
    const p = c2.createService(ns?.id ?? '', 'api', {});
    await advance(clock, 1_000);
    const svc = await p;
    expect(fake.serviceByName('demo', 'api')?.id).toBe(svc.id);
    await c2.close();
    await client.close();
  });

  it('a call with no answer fails at its deadline, the signal reaching the port', async () => {
    const { clock, fake, client } = setup();
    const signals: AbortSignal[] = [];
    const hung = {
      ...fake,
      // Never answers, whatever the signal says: the deadline must still end the call.
      discoverInstancesRevision: (
        _ns: string,
        _svc: string,
        options?: { signal?: AbortSignal },
      ) => {
        if (options?.signal !== undefined) signals.push(options.signal);
        return new Promise<number>(() => undefined);
      },
    };
    const c2 = createCloudMapClient(hung, { clock, limiter: unlimited, random: () => 0.5 });
    let error: unknown;
    const p = c2.discoverInstancesRevision('demo', 'web').catch((e: unknown) => (error = e));
    await advance(clock, 9_900, 100);
    expect(error).toBeUndefined();
    await advance(clock, 200, 100);
    await p;
    expect(error).toMatchObject({ code: 'ServiceUnavailable', retryable: true });
    expect((error as Error).message).toBe(
      'discoverInstancesRevision: no answer from Cloud Map within the call deadline of 10 s (connection dropped)',
    );
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    await c2.close();
    await client.close();
  });

  it('retries stop when the next one could not start before the deadline', async () => {
    const { clock, fake, client } = setup({ random: () => 0.999 });
    fake.failAlways('listInstances', 'ThrottlingException');
    let error: unknown;
    const p = client.listInstances('svc').catch((e: unknown) => (error = e));
    // Throttle backoff (full jitter at its ceiling): 0.5, 1, 2, 4 s; the fifth attempt at
    // 7.5 s fails again and the next wait, 8 s, would end past the 10 s deadline, so the call
    // fails then with the last error (without the deadline: six attempts, 15.5 s).
    await advance(clock, 7_400, 100);
    expect(error).toBeUndefined();
    await advance(clock, 200, 100);
    await p;
    expect(fake.calls('listInstances')).toBe(5);
    expect(error).toMatchObject({ code: 'ThrottlingException' });
    await client.close();
  });
});
