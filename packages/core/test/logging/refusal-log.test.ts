import { describe, expect, it } from 'vitest';
import { createRefusalLog } from '../../src/index.js';
import { createMemoryLogger, FakeClock } from '../../src/testing/index.js';

function setup(maxKeys?: number) {
  const logger = createMemoryLogger();
  const clock = new FakeClock();
  const counted: string[] = [];
  const log = createRefusalLog({
    logger,
    clock,
    intervalMs: 60_000,
    count: (reason) => counted.push(reason),
    ...(maxKeys === undefined ? {} : { maxKeys }),
  });
  return { logger, clock, counted, log };
}

describe('refusal log', () => {
  it('counts every refusal but logs each distinct one once per interval', () => {
    const { logger, clock, counted, log } = setup();
    for (let i = 0; i < 1_000; i++) {
      log.refused({ reason: 'refused-address', subject: 'shop/cart c2 169.254.169.254' });
      log.refused({ reason: 'refused-address', subject: 'shop/cart c2 127.0.0.1' });
    }
    expect(counted).toHaveLength(2_000);
    expect(logger.find('refused')).toHaveLength(2);
    clock.advance(60_000);
    log.refused({ reason: 'refused-address', subject: 'shop/cart c2 127.0.0.1' });
    const lines = logger.find('refused');
    expect(lines).toHaveLength(3);
    expect(lines[2]?.fields).toMatchObject({
      reason: 'refused-address',
      subject: 'shop/cart c2 127.0.0.1',
      repeatsSinceLastLog: 999,
    });
  });

  it('the same subject refused for another reason is another line', () => {
    const { logger, log } = setup();
    log.refused({ reason: 'namespace-denied', subject: 'kube-system/x' });
    log.refused({ reason: 'namespace-cap', subject: 'kube-system/x' });
    expect(logger.find('refused').map((e) => e.fields['reason'])).toEqual([
      'namespace-denied',
      'namespace-cap',
    ]);
  });

  it('remembers at most maxKeys refusals (memory stays bounded under a flood)', () => {
    const { logger, log } = setup(100);
    for (let i = 0; i < 10_000; i++) log.refused({ reason: 'invalid-instance', subject: `i-${i}` });
    expect(log.remembered).toBe(100);
    expect(logger.find('refused')).toHaveLength(10_000);
  });
});
