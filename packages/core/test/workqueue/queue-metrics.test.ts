import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createQueueMetricsProvider, createWorkQueue, type RateLimiter } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';

const noLimit: RateLimiter<string> = { when: () => 0, forget: () => {}, numRequeues: () => 0 };

async function value(registry: Registry, name: string, labels: string): Promise<number> {
  const line = (await registry.metrics())
    .split('\n')
    .find((l) => l.startsWith(`${name}{${labels}} `));
  if (line === undefined) throw new Error(`no ${name}{${labels}}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe("work-queue metrics (client-go's names and label)", () => {
  it('follow a key through the queue on the fake clock', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const provider = createQueueMetricsProvider(registry);
    const queue = createWorkQueue<string>({
      clock,
      rateLimiter: noLimit,
      metrics: provider('serviceimport', clock),
    });
    const q = 'name="serviceimport"';
    // Every family is there once the queue exists.
    expect(await value(registry, 'workqueue_depth', q)).toBe(0);
    expect(await value(registry, 'workqueue_adds_total', q)).toBe(0);
    expect(await value(registry, 'workqueue_retries_total', q)).toBe(0);

    queue.add('a');
    queue.add('a'); // merged: not an add
    queue.add('b');
    expect(await value(registry, 'workqueue_adds_total', q)).toBe(2);
    expect(await value(registry, 'workqueue_depth', q)).toBe(2);

    clock.advance(2_000); // 'a' waited 2 s
    expect(await queue.get()).toBe('a');
    expect(await value(registry, 'workqueue_depth', q)).toBe(1);
    expect(await value(registry, 'workqueue_queue_duration_seconds_sum', q)).toBe(2);
    clock.advance(3_000);
    expect(await queue.get()).toBe('b'); // waited 5 s
    clock.advance(1_000);
    // 'a' has run 4 s, 'b' 1 s.
    expect(await value(registry, 'workqueue_unfinished_work_seconds', q)).toBe(5);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', q)).toBe(4);

    queue.done('a');
    expect(await value(registry, 'workqueue_work_duration_seconds_count', q)).toBe(1);
    expect(await value(registry, 'workqueue_work_duration_seconds_sum', q)).toBe(4);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', q)).toBe(1);

    queue.addAfter('a', 500);
    queue.addRateLimited('c');
    expect(await value(registry, 'workqueue_retries_total', q)).toBe(2);
    expect(await value(registry, 'workqueue_queue_duration_seconds_count', q)).toBe(2);
    queue.done('b');
    expect(await value(registry, 'workqueue_unfinished_work_seconds', q)).toBe(0);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', q)).toBe(0);
    expect(await value(registry, 'workqueue_work_duration_seconds_count', q)).toBe(2);
  });
});
