import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  TerminalError,
  createController,
  createControllerMetrics,
  exponentialBackoffLimiter,
  type ReconcileOutcome,
  type Reconciler,
} from '../../src/index.js';
import { createMemoryLogger, FakeClock } from '../../src/testing/index.js';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function harness(reconcile: Reconciler<string>, workers = 1) {
  const clock = new FakeClock();
  const logger = createMemoryLogger();
  const registry = new Registry();
  const outcomes: [string, ReconcileOutcome][] = [];
  let ids = 0;
  const controller = createController<string>({
    name: 'thing',
    reconcile,
    workers,
    clock,
    logger,
    metrics: createControllerMetrics(registry),
    rateLimiter: exponentialBackoffLimiter({ baseDelayMs: 100, maxDelayMs: 10_000 }),
    onResult: (k, o) => outcomes.push([k, o]),
    newReconcileId: () => `r${String(++ids)}`,
  });
  const done = controller.run();
  return { clock, logger, registry, outcomes, controller, queue: controller.queue, done };
}

describe('createController', () => {
  it('retries a failing key with backoff until it succeeds, then resets its backoff', async () => {
    let calls = 0;
    const { clock, queue, outcomes, controller, done } = harness(async () => {
      calls++;
      if (calls <= 2) throw new Error('transient');
    });
    queue.add('a');
    await flush();
    expect(calls).toBe(1);
    clock.advance(99);
    await flush();
    expect(calls).toBe(1);
    clock.advance(1); // first backoff: 100 ms
    await flush();
    expect(calls).toBe(2);
    clock.advance(200); // second backoff: 200 ms
    await flush();
    expect(calls).toBe(3);
    expect(queue.numRequeues('a')).toBe(0);
    expect(outcomes.map(([, o]) => o)).toEqual(['error', 'error', 'success']);
    await controller.stop();
    await done;
  });

  it('logs each failure once, at error, with controller, key and reconcile id', async () => {
    const { logger, controller, queue } = harness(async (_key, ctx) => {
      ctx?.logger.info('step');
      throw new Error('boom');
    });
    queue.add('ns/a');
    await flush();
    await controller.stop();
    expect(logger.find('step').map((e) => e.fields)).toEqual([
      { controller: 'thing', key: 'ns/a', reconcileId: 'r1' },
    ]);
    const failed = logger.find('reconcile failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 'error',
      fields: { controller: 'thing', key: 'ns/a', reconcileId: 'r1', outcome: 'error' },
    });
    expect(failed[0]?.fields['err']).toMatchObject({ message: 'boom' });
  });

  it('counts results and retries per controller in the shared families', async () => {
    let calls = 0;
    const { clock, registry, controller, queue } = harness(async () => {
      calls++;
      if (calls === 1) throw new Error('transient');
      if (calls === 2) return { requeueAfterMs: 1_000 };
      return undefined;
    });
    queue.add('a');
    await flush();
    clock.advance(100);
    await flush();
    clock.advance(1_000);
    await flush();
    await controller.stop();
    const text = await registry.metrics();
    expect(text).toContain('mcs_reconcile_total{controller="thing",result="error"} 1');
    expect(text).toContain('mcs_reconcile_total{controller="thing",result="requeue"} 1');
    expect(text).toContain('mcs_reconcile_total{controller="thing",result="success"} 1');
    expect(text).toContain('mcs_reconcile_duration_seconds_count{controller="thing"} 3');
    // client-go's queue families: the add, the retry after the error and the requeue (both
    // delayed adds count as retries, as in client-go), three gets, three finished keys.
    expect(text).toContain('workqueue_adds_total{name="thing"} 3');
    expect(text).toContain('workqueue_retries_total{name="thing"} 2');
    expect(text).toContain('workqueue_depth{name="thing"} 0');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="thing"} 3');
    expect(text).toContain('workqueue_work_duration_seconds_count{name="thing"} 3');
    expect(text).toContain('workqueue_unfinished_work_seconds{name="thing"} 0');
    expect(text).toContain('workqueue_longest_running_processor_seconds{name="thing"} 0');
    expect(text).not.toContain('mcs_workqueue_');
  });

  it('reports a TerminalError once and does not retry it', async () => {
    let calls = 0;
    const { clock, queue, outcomes, controller, done } = harness(async () => {
      calls++;
      throw new TerminalError('bad spec');
    });
    queue.add('a');
    await flush();
    clock.advance(60_000);
    await flush();
    expect(calls).toBe(1);
    expect(outcomes).toEqual([['a', 'terminal']]);
    await controller.stop();
    await done;
  });

  it('requeues after the interval a reconcile asks for', async () => {
    let calls = 0;
    const { clock, queue, outcomes, controller, done } = harness(async () => {
      calls++;
      return { requeueAfterMs: 5000 };
    }, 2);
    queue.add('a');
    await flush();
    clock.advance(4999);
    await flush();
    expect(calls).toBe(1);
    clock.advance(1);
    await flush();
    expect(calls).toBe(2);
    expect(outcomes[0]).toEqual(['a', 'requeue']);
    await controller.stop();
    await done;
  });

  it('never reconciles one key concurrently, even with several workers', async () => {
    let active = 0;
    let maxActive = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const { queue, controller, done } = harness(async () => {
      calls++;
      active++;
      maxActive = Math.max(maxActive, active);
      if (calls === 1) await gate;
      active--;
    }, 4);
    queue.add('a');
    await flush();
    queue.add('a');
    queue.add('a');
    await flush();
    expect(calls).toBe(1);
    release();
    await flush();
    expect(calls).toBe(2);
    expect(maxActive).toBe(1);
    await controller.stop();
    await done;
  });

  it('stop ends the workers after the key in flight', async () => {
    let finished = false;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const { queue, controller, done } = harness(async () => {
      await gate;
      finished = true;
    }, 2);
    queue.add('a');
    await flush();
    const stopped = controller.stop();
    release();
    await stopped;
    await done;
    expect(finished).toBe(true);
  });
});

describe('createController run(signal) (leadership, ADR 0020)', () => {
  it('hands the signal to reconciles; on abort, drops queued keys and ends once the one in flight ends', async () => {
    const leading = new AbortController();
    const seen: string[] = [];
    const signals: (AbortSignal | undefined)[] = [];
    let release: () => void = () => {};
    const controller = createController<string>({
      name: 'thing',
      reconcile: async (key, ctx) => {
        seen.push(key);
        signals.push(ctx?.signal);
        if (key === 'slow') await new Promise<void>((r) => (release = r));
      },
      workers: 1,
      clock: new FakeClock(),
      logger: createMemoryLogger(),
    });
    const done = controller.run(leading.signal);
    controller.queue.add('slow');
    controller.queue.add('queued-1');
    controller.queue.add('queued-2');
    await flush();
    expect(seen).toEqual(['slow']);
    expect(signals[0]).toBe(leading.signal);
    leading.abort();
    release();
    await done;
    // The next leader's work: never reconciled here.
    expect(seen).toEqual(['slow']);
    expect(controller.queue.shuttingDown).toBe(true);
    controller.queue.add('late');
    await flush();
    expect(seen).toEqual(['slow']);
  });
});
