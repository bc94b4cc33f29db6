import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createShutdown } from '../../src/runtime/shutdown.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { settle } from '../helpers/async.js';

const setup = () => {
  const proc = new EventEmitter();
  const exits: number[] = [];
  const order: string[] = [];
  const shutdown = createShutdown({
    logger: createMemoryLogger(),
    process: proc as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    exit: (c) => exits.push(c),
  });
  return { proc, exits, order, shutdown };
};

describe('graceful shutdown', () => {
  it('SIGTERM aborts the signal, runs steps by phase, then exits 0', async () => {
    const { proc, exits, order, shutdown } = setup();
    shutdown.onShutdown('informers', 30, () => void order.push('informers'));
    shutdown.onShutdown('leader', 10, async () => {
      await settle();
      order.push('leader');
    });
    shutdown.onShutdown(
      'queues',
      20,
      () => void order.push(`queues aborted=${String(shutdown.signal.aborted)}`),
    );
    proc.emit('SIGTERM', 'SIGTERM');
    await settle(10);
    expect(order).toEqual(['leader', 'queues aborted=true', 'informers']);
    expect(exits).toEqual([0]);
    shutdown.dispose();
  });

  it('a failing step is logged, the rest run, and the exit code is 1', async () => {
    const { proc, exits, order, shutdown } = setup();
    shutdown.onShutdown('a', 1, () => {
      throw new Error('boom');
    });
    shutdown.onShutdown('b', 2, () => void order.push('b'));
    proc.emit('SIGINT', 'SIGINT');
    await settle(10);
    expect(order).toEqual(['b']);
    expect(exits).toEqual([1]);
    shutdown.dispose();
  });

  it('a second signal exits at once', async () => {
    const { proc, exits, shutdown } = setup();
    shutdown.onShutdown('slow', 1, () => new Promise(() => {}));
    proc.emit('SIGTERM', 'SIGTERM');
    proc.emit('SIGTERM', 'SIGTERM');
    await settle();
    expect(exits).toEqual([1]);
    shutdown.dispose();
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('programmatic shutdown runs the steps once and does not exit', async () => {
    const { exits, order, shutdown } = setup();
    shutdown.onShutdown('x', 1, () => void order.push('x'));
    await Promise.all([shutdown.shutdown('leadership lost'), shutdown.shutdown('again')]);
    expect(order).toEqual(['x']);
    expect(exits).toEqual([]);
    shutdown.dispose();
  });
});

describe('shutdown with an exit code', () => {
  it('exits with the code after the steps (lost leadership)', async () => {
    const { exits, order, shutdown } = setup();
    shutdown.onShutdown('x', 1, () => void order.push('x'));
    await shutdown.shutdown('lost leadership', 1);
    expect(order).toEqual(['x']);
    expect(exits).toEqual([1]);
    shutdown.dispose();
  });
});
