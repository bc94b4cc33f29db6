import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  superviseInformer,
  waitForCacheSync,
  CacheSyncAbortedError,
} from '../../src/runtime/informer.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { advance, settle } from '../helpers/async.js';
import { FakeInformer, obj } from '../helpers/fake-informer.js';
import { FakeClock } from '../../src/testing/index.js';

const setup = (opts: { watchdogMs?: number } = {}) => {
  const clock = new FakeClock();
  const fake = new FakeInformer<KubernetesObject>();
  const events: string[] = [];
  const logger = createMemoryLogger();
  const informer = superviseInformer<KubernetesObject>({
    name: 'things',
    create: (listed) => {
      fake.setListed(listed);
      return fake;
    },
    onEvent: (e, o) => events.push(`${e}:${o.metadata?.name ?? ''}`),
    logger,
    clock,
    random: () => 0.5,
    backoff: { baseDelayMs: 1_000, maxDelayMs: 8_000 },
    ...opts,
  });
  return { clock, fake, events, logger, informer };
};

describe('supervised informer', () => {
  it('syncs after the first list and delivers events', async () => {
    const { fake, events, informer } = setup();
    fake.nextList = [obj('a'), obj('b')];
    expect(informer.hasSynced()).toBe(false);
    informer.start();
    await waitForCacheSync([informer]);
    expect(informer.hasSynced()).toBe(true);
    expect(events).toEqual(['add:a', 'add:b']);
    expect(informer.get('a', 'default')?.metadata?.name).toBe('a');
    await informer.stop();
  });

  it("handlers added with on (an agent's watches) get each event after onEvent, until removed", async () => {
    const { fake, events, informer } = setup();
    const seen: string[] = [];
    const off = informer.on((e, o) => seen.push(`${e}:${o.metadata?.name ?? ''}`));
    fake.nextList = [obj('a')];
    informer.start();
    await waitForCacheSync([informer]);
    off();
    fake.fire('delete', obj('a'));
    expect(events).toEqual(['add:a', 'delete:a']);
    expect(seen).toEqual(['add:a']);
    await informer.stop();
  });

  it('restarts after a list error with backoff, then syncs', async () => {
    const { clock, fake, informer, logger } = setup();
    fake.nextList = new Error('connection refused');
    informer.start();
    await settle();
    expect(informer.hasSynced()).toBe(false);
    expect(fake.starts).toBe(1);
    fake.nextList = [obj('a')];
    await advance(clock, 400, 100);
    expect(fake.starts).toBe(1); // jittered delay: 0.5 × 1000 ms
    await advance(clock, 200, 100);
    expect(fake.starts).toBe(2);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.restarts).toBe(1);
    expect(logger.find('informer restarting')[0]?.fields).toMatchObject({
      reason: 'error',
      delayMs: 500,
    });
    await informer.stop();
  });

  it('restarts a watch that failed after sync; the relist reports deletes missed meanwhile', async () => {
    const { clock, fake, events, informer } = setup();
    fake.nextList = [obj('a'), obj('b')];
    informer.start();
    await informer.synced();
    fake.nextList = [obj('a', 'default', '2')];
    fake.fire('error', Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }));
    await advance(clock, 1_000, 100);
    expect(fake.starts).toBe(2);
    expect(events).toEqual(['add:a', 'add:b', 'delete:b', 'update:a']);
    await informer.stop();
  });

  it('backs off exponentially while errors repeat', async () => {
    const { clock, fake, informer } = setup();
    fake.nextList = new Error('forbidden');
    informer.start();
    // Delays 500, 1000, 2000, 4000 (random 0.5 of 1 s, 2 s, 4 s, 8 s): starts at 0, .5, 1.5, 3.5, 7.5 s
    await advance(clock, 7_400, 100);
    expect(fake.starts).toBe(4);
    await advance(clock, 200, 100);
    expect(fake.starts).toBe(5);
    await informer.stop();
  });

  it('ignores the AbortError of its own stop and errors after stop', async () => {
    const { clock, fake, informer } = setup();
    informer.start();
    await informer.synced();
    fake.fire('error', Object.assign(new Error('aborted'), { name: 'AbortError' }));
    await advance(clock, 5_000, 500);
    expect(fake.starts).toBe(1);
    await informer.stop();
    fake.fire('error', new Error('late'));
    await advance(clock, 5_000, 500);
    expect(fake.starts).toBe(1);
  });

  it('the watchdog restarts an informer that went silent, not one that reconnects', async () => {
    const { clock, fake, informer } = setup({ watchdogMs: 60_000 });
    informer.start();
    await informer.synced();
    // client-node reconnects an idle watch every 30 s: that is activity.
    for (let i = 0; i < 4; i++) {
      await advance(clock, 30_000, 5_000);
      fake.fire('connect');
    }
    expect(fake.starts).toBe(1);
    await advance(clock, 80_000, 5_000);
    expect(fake.starts).toBe(2);
    expect(fake.stops).toBe(1);
    await informer.stop();
  });

  it('a throwing handler is logged and does not stop delivery', async () => {
    const clock = new FakeClock();
    const fake = new FakeInformer<KubernetesObject>();
    const logger = createMemoryLogger();
    const seen: string[] = [];
    const informer = superviseInformer<KubernetesObject>({
      name: 'x',
      create: (l) => (fake.setListed(l), fake),
      onEvent: (_e, o) => {
        seen.push(o.metadata?.name ?? '');
        if (o.metadata?.name === 'bad') throw new Error('boom');
      },
      logger,
      clock,
    });
    fake.nextList = [obj('bad'), obj('good')];
    informer.start();
    await informer.synced();
    expect(seen).toEqual(['bad', 'good']);
    expect(logger.find('informer handler failed')).toHaveLength(1);
    await informer.stop();
  });

  it('waitForCacheSync rejects on abort naming the informers not synced', async () => {
    const { fake, informer } = setup();
    fake.nextList = new Error('no');
    informer.start();
    const ac = new AbortController();
    const p = waitForCacheSync([informer], ac.signal);
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(CacheSyncAbortedError);
    await expect(p).rejects.toThrow('things');
    await informer.stop();
  });
});
