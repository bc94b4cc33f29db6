import { describe, expect, it } from 'vitest';
import { createEventDedup } from '../src/event-dedup.js';
import { serviceExport } from './fake-k8s.js';

function setup(opts: { maxObjects?: number } = {}) {
  let now = 0;
  const emitted: string[] = [];
  const dedup = createEventDedup(
    (se, type, reason, message) =>
      emitted.push(`${se.metadata.name}/${se.metadata.uid ?? ''} ${type} ${reason}: ${message}`),
    () => now,
    { windowMs: 1_000, ...opts },
  );
  return { dedup, emitted, advance: (ms: number) => (now += ms) };
}

const se = (name = 'cart', uid = 'u1') => {
  const o = serviceExport('shop', name);
  o.metadata.uid = uid;
  return o;
};

describe('event de-duplication', () => {
  it('drops an Event identical to the last one of the same object within the window', () => {
    const { dedup, emitted, advance } = setup();
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    advance(999);
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    expect(emitted).toHaveLength(1);
    advance(1);
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    expect(emitted).toHaveLength(2);
  });

  it('lets a repeat through after anything different, for another object or a new uid', () => {
    const { dedup, emitted } = setup();
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    dedup.event(se(), 'Warning', 'ExportFailed', 'still too big');
    dedup.event(se(), 'Normal', 'Exported', 'ok');
    dedup.event(se(), 'Warning', 'ExportFailed', 'too big');
    dedup.event(se('other'), 'Warning', 'ExportFailed', 'too big');
    dedup.event(se('cart', 'u2'), 'Warning', 'ExportFailed', 'too big');
    expect(emitted).toEqual([
      'cart/u1 Warning ExportFailed: too big',
      'cart/u1 Warning ExportFailed: still too big',
      'cart/u1 Normal Exported: ok',
      'cart/u1 Warning ExportFailed: too big',
      'other/u1 Warning ExportFailed: too big',
      'cart/u2 Warning ExportFailed: too big',
    ]);
  });

  it('forgets a removed object, and remembers a bounded number of objects', () => {
    const { dedup, emitted } = setup({ maxObjects: 2 });
    dedup.event(se('a'), 'Normal', 'Exported', 'ok');
    dedup.forget('shop', 'a');
    dedup.event(se('a'), 'Normal', 'Exported', 'ok');
    dedup.event(se('b'), 'Normal', 'Exported', 'ok');
    dedup.event(se('c'), 'Normal', 'Exported', 'ok'); // drops a, the oldest
    dedup.event(se('a'), 'Normal', 'Exported', 'ok');
    dedup.event(se('c'), 'Normal', 'Exported', 'ok');
    expect(emitted.map((e) => e.split('/')[0])).toEqual(['a', 'a', 'b', 'c', 'a']);
  });
});
