import { describe, expect, it } from 'vitest';
import {
  planClusterFeed,
  planFeedRead,
  type FeedCursor,
  type FeedRecord,
} from '../../src/index.js';

const rec = (
  seq: number,
  changes: [string, number][],
  over: Partial<FeedRecord> = {},
): FeedRecord => ({
  cluster: { clusterId: 'c1', clustersetId: 'set' },
  epoch: 'e1',
  seq,
  floor: 0,
  updatedAtMs: 0,
  changes: changes.map(([name, s]) => ({ namespace: 'ns', name, seq: s })),
  ...over,
});
const at = (seq: number, epoch = 'e1'): FeedCursor => ({ epoch, seq });

describe('planClusterFeed', () => {
  it.each<
    [string, FeedCursor | undefined, FeedRecord, boolean, string[], string | undefined, FeedCursor]
  >([
    ['baseline read adopts', undefined, rec(5, [['a', 5]]), false, [], undefined, at(5)],
    [
      'moved: reads what is newer',
      at(3),
      rec(5, [
        ['a', 5],
        ['b', 4],
        ['c', 3],
      ]),
      true,
      ['a', 'b'],
      undefined,
      at(5),
    ],
    ['duplicate read: nothing', at(5), rec(5, [['a', 5]]), true, [], undefined, at(5)],
    [
      'older record (reordered): nothing, cursor kept',
      at(7),
      rec(5, [['a', 5]]),
      true,
      [],
      undefined,
      at(7),
    ],
    [
      'gap beyond the floor: sweep',
      at(3),
      rec(9, [['a', 9]], { floor: 5 }),
      true,
      [],
      'gap',
      at(9),
    ],
    [
      'floor at the cursor: complete',
      at(5),
      rec(9, [['a', 9]], { floor: 5 }),
      true,
      ['a'],
      undefined,
      at(9),
    ],
    [
      'new epoch (restart): sweep',
      at(40),
      rec(1, [['a', 1]], { epoch: 'e2' }),
      true,
      [],
      'new-epoch',
      at(1, 'e2'),
    ],
    [
      'new epoch with a higher seq: still sweep',
      at(1),
      rec(90, [['a', 90]], { epoch: 'e2' }),
      true,
      [],
      'new-epoch',
      at(90, 'e2'),
    ],
    [
      'new writer after the baseline: sweep',
      undefined,
      rec(2, [['a', 2]]),
      true,
      [],
      'new-writer',
      at(2),
    ],
  ])('%s', (_, cursor, record, known, services, sweep, next) => {
    const out = planClusterFeed(cursor, record, known);
    expect(out.services.map((s) => s.name)).toEqual(services);
    expect(out.sweep).toBe(sweep);
    expect(out.cursor).toEqual(next);
  });
});

describe('planFeedRead', () => {
  const c2 = (seq: number, changes: [string, number][]) =>
    rec(seq, changes, { cluster: { clusterId: 'c2', clustersetId: 'set' } });

  it('merges clusters, reading each service once', () => {
    const cursors = new Map([
      ['c1', at(1)],
      ['c2', at(1)],
    ]);
    const plan = planFeedRead(
      cursors,
      [
        rec(2, [['a', 2]]),
        c2(3, [
          ['a', 3],
          ['b', 2],
        ]),
      ],
      true,
    );
    expect(plan.services.map((s) => s.name)).toEqual(['a', 'b']);
    expect(plan.sweep).toEqual([]);
    expect(plan.cursors.get('c2')).toEqual(at(3));
  });

  it('sweeps when a writer vanished, and forgets it', () => {
    const plan = planFeedRead(
      new Map([
        ['c1', at(1)],
        ['c2', at(4)],
      ]),
      [rec(1, [])],
      true,
    );
    expect(plan.sweep).toEqual([{ clusterId: 'c2', reason: 'writer-gone' }]);
    expect(plan.cursors.has('c2')).toBe(false);
  });

  it('the baseline read sweeps for nothing', () => {
    const plan = planFeedRead(new Map(), [rec(3, [['a', 3]]), c2(8, [])], false);
    expect(plan).toEqual({
      services: [],
      sweep: [],
      cursors: new Map([
        ['c1', at(3)],
        ['c2', at(8)],
      ]),
    });
  });

  it('is safe under any order of lost, repeated and reordered records', () => {
    // One writer's history: at seq i it changed service s<i mod 4>. A reader that sees any
    // subsequence of the records, in any order, must have read every service changed after its
    // baseline by the time it sees the last record, or have been told to sweep.
    const history = Array.from({ length: 12 }, (_, i) => i + 1);
    const recordAt = (seq: number) => {
      const changes = new Map<string, number>();
      for (let s = 1; s <= seq; s++) changes.set(`s${s % 4}`, s);
      // The feed holds the three newest changes only.
      const kept = [...changes].filter(([, s]) => s > seq - 3);
      return rec(seq, kept, { floor: Math.max(0, seq - 3) });
    };
    let rng = 7;
    const random = () => (rng = (rng * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 500; trial++) {
      const seen = history.filter(() => random() < 0.5).map(recordAt);
      for (let i = seen.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [seen[i], seen[j]] = [seen[j] as FeedRecord, seen[i] as FeedRecord];
      }
      if (random() < 0.3 && seen.length > 0) seen.push(seen[0] as FeedRecord); // duplicate
      seen.push(recordAt(12)); // the newest one is read eventually
      let cursors = planFeedRead(new Map(), [recordAt(1)], false).cursors;
      const readAfter = new Map<string, number>(); // service → highest seq covered by a read
      let swept = false;
      for (const r of seen) {
        const plan = planFeedRead(cursors, [r], true);
        if (plan.sweep.length > 0) swept = true;
        for (const s of plan.services) readAfter.set(s.name, r.seq);
        cursors = plan.cursors;
      }
      if (swept) continue;
      for (let s = 2; s <= 12; s++) {
        // Reading a service at record seq r covers its change at s when r >= s.
        expect(readAfter.get(`s${s % 4}`) ?? 0).toBeGreaterThanOrEqual(s);
      }
    }
  });
});
