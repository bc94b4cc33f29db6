import { describe, expect, it } from 'vitest';
import {
  FEED_LAG_GRACE_MS,
  FEED_SEQ_SLACK,
  planFeed,
  vouchFor,
  type FeedPlanOptions,
  type FeedRecord,
  type FeedVoucher,
  type WriterFollow,
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
const TTL = 120_000;
const voucher = (seq: number, over: Partial<FeedVoucher> = {}): FeedVoucher => ({
  epoch: 'e1',
  seq,
  renewedSeenAtMs: 0,
  observedAtMs: 0,
  ...over,
});
const opts = (over: Partial<FeedPlanOptions> = {}): FeedPlanOptions => ({
  nowMs: 1000,
  ttlMs: TTL,
  budget: { vouched: 100, unvouched: 100 },
  baseline: false,
  ...over,
});
const vouchers = (v: FeedVoucher | undefined, clusterId = 'c1'): Map<string, FeedVoucher> =>
  v === undefined ? new Map() : new Map([[clusterId, v]]);
const names = (plan: { services: { name: string }[] }): string[] =>
  plan.services.map((s) => s.name);

/** Follows `records` in order, as the follower does, and returns every plan. */
function follow(
  records: FeedRecord[][],
  v: Map<string, FeedVoucher>,
  over: Partial<FeedPlanOptions> = {},
) {
  let writers = new Map<string, WriterFollow>();
  return records.map((rs, i) => {
    const plan = planFeed(writers, rs, v, opts({ baseline: i === 0, ...over }));
    writers = plan.writers;
    return plan;
  });
}

describe('vouchFor', () => {
  it.each<[string, FeedVoucher | undefined, FeedRecord, number, string | undefined]>([
    ['same epoch, same seq', voucher(5), rec(5, []), 1000, undefined],
    [
      'the feed ran ahead within the slack',
      voucher(5),
      rec(5 + FEED_SEQ_SLACK, []),
      1000,
      undefined,
    ],
    ['no heartbeat states a feed', undefined, rec(5, []), 1000, 'no-heartbeat'],
    ['renewal not seen changing for a TTL', voucher(5), rec(5, []), TTL + 1, 'heartbeat-expired'],
    [
      'another epoch (a restart, or a stale record)',
      voucher(5, { epoch: 'e2' }),
      rec(5, []),
      1000,
      'epoch-mismatch',
    ],
    ['a forged FEED_SEQ far ahead', voucher(5), rec(2147483647, []), 1000, 'seq-ahead'],
    [
      'the feed behind its heartbeat, briefly',
      voucher(9),
      rec(5, []),
      FEED_LAG_GRACE_MS,
      undefined,
    ],
    [
      'the feed behind its heartbeat for long',
      voucher(9),
      rec(5, []),
      FEED_LAG_GRACE_MS + 1,
      'seq-behind',
    ],
  ])('%s', (_, v, record, now, reason) => {
    expect(vouchFor(record, v, now, TTL)).toBe(reason);
  });
});

describe('planFeed', () => {
  it('adopts every record at the baseline and reads what a later record adds', () => {
    const [first, second] = follow(
      [
        [
          rec(2, [
            ['a', 2],
            ['b', 1],
          ]),
        ],
        [
          rec(3, [
            ['c', 3],
            ['a', 2],
            ['b', 1],
          ]),
        ],
      ],
      vouchers(voucher(3)),
    );
    expect(names(first!)).toEqual([]);
    expect(names(second!)).toEqual(['c']);
    expect([...second!.vouched]).toEqual(['c1']);
  });

  it('reads nothing again for a duplicate or an older copy of a record', () => {
    const plans = follow(
      [
        [rec(1, [])],
        [
          rec(3, [
            ['a', 3],
            ['b', 2],
          ]),
        ],
        [
          rec(3, [
            ['a', 3],
            ['b', 2],
          ]),
        ],
        [rec(2, [['b', 2]])],
      ],
      vouchers(voucher(3)),
    );
    expect(plans.map(names)).toEqual([[], ['a', 'b'], [], []]);
  });

  it('a forged FEED_SEQ cannot hide a later real change (issue 31)', () => {
    const plans = follow(
      [
        [rec(5, [['a', 5]])],
        // Forged: same epoch, the highest sequence number, the real names at it.
        [
          rec(
            2147483647,
            [
              ['a', 2147483647],
              ['b', 2147483647],
            ],
            { floor: 5 },
          ),
        ],
        // The writer's next real write replaces it: b changed at 6.
        [
          rec(6, [
            ['b', 6],
            ['a', 5],
          ]),
        ],
      ],
      vouchers(voucher(5)),
    );
    // The forged record is not vouched for; its names cost reads, from the small budget.
    expect(plans[1]!.unvouched.get('c1')).toBe('seq-ahead');
    expect(names(plans[1]!)).toEqual(['a', 'b']);
    // b:6 is the real change; a:5 is read again because the forged record pruned it.
    expect(names(plans[2]!)).toEqual(['b', 'a']);
    expect(plans[2]!.vouched.has('c1')).toBe(true);
    expect(plans[2]!.gaps).toEqual([]);
  });

  it('an older copy replacing the record before it was read: the real entries are read when they return', () => {
    const plans = follow(
      [
        [rec(4, [['a', 4]])],
        [rec(3, [['z', 3]])],
        [
          rec(6, [
            ['c', 6],
            ['b', 5],
            ['a', 4],
          ]),
        ],
      ],
      vouchers(voucher(6)),
    );
    expect(names(plans[1]!)).toEqual(['z']);
    // a:4 was handed out before the replay pruned it: it is read again (a read, never a miss).
    expect(names(plans[2]!)).toEqual(['c', 'b', 'a']);
  });

  it('a vouched record whose floor passed what this reader saw asks for a sweep', () => {
    const plans = follow(
      [[rec(2, [['a', 2]])], [rec(10, [['j', 10]], { floor: 9 })]],
      vouchers(voucher(10)),
    );
    expect(plans[1]!.gaps).toEqual(['c1']);
  });

  it('a forged sequence number does not move what the reader saw, so a real gap is still found', () => {
    const plans = follow(
      [
        [rec(2, [['a', 2]])],
        [rec(100000, [], { floor: 99999 })],
        [rec(300, [['x', 300]], { floor: 299 })],
      ],
      vouchers(voucher(300)),
    );
    expect(plans[1]!.unvouched.get('c1')).toBe('seq-ahead');
    expect(plans[1]!.gaps).toEqual([]);
    expect(plans[2]!.gaps).toEqual(['c1']);
  });

  it('a stale record (writer restarted without a feed: its heartbeat names none) is not vouched for', () => {
    const [, plan] = follow([[rec(5, [['a', 5]])], [rec(5, [['a', 5]])]], new Map());
    expect(plan!.unvouched.get('c1')).toBe('no-heartbeat');
    expect(plan!.vouched.size).toBe(0);
  });

  it('bounds reads: vouched writers first, the others share a small budget', () => {
    const flood = Array.from({ length: 600 }, (_, i): [string, number] => [`f${i}`, 2]);
    const ghost = rec(2, flood, { cluster: { clusterId: 'ghost', clustersetId: 'set' } });
    const real = rec(2, [['real', 2]]);
    const plans = follow(
      [
        [rec(1, []), rec(1, [], { cluster: { clusterId: 'ghost', clustersetId: 'set' } })],
        [real, ghost],
        [real, ghost],
      ],
      vouchers(voucher(2)),
      { budget: { vouched: 16, unvouched: 2 } },
    );
    expect(names(plans[1]!)[0]).toBe('real');
    expect(plans[1]!.services).toHaveLength(3);
    expect(plans[1]!.backlog).toBe(598);
    // The backlog drains two a round; the handed-out set never exceeds the record's entries.
    expect(plans[2]!.services).toHaveLength(2);
    expect(plans[2]!.writers.get('ghost')!.handedOut.size).toBe(4);
  });

  it('reads only local namespaces and each service once', () => {
    const two = rec(3, [['a', 3]], { cluster: { clusterId: 'c2', clustersetId: 'set' } });
    const plans = follow(
      [
        [rec(1, []), rec(1, [], { cluster: { clusterId: 'c2', clustersetId: 'set' } })],
        [
          rec(
            3,
            [
              ['a', 3],
              ['b', 2],
            ],
            {
              changes: [
                { namespace: 'ns', name: 'a', seq: 3 },
                { namespace: 'other', name: 'b', seq: 2 },
              ],
            },
          ),
          two,
        ],
      ],
      new Map([
        ['c1', voucher(3)],
        ['c2', voucher(3)],
      ]),
      { isLocalNamespace: (ns) => ns === 'ns' },
    );
    expect(names(plans[1]!)).toEqual(['a']);
  });

  it('loses no change under lost, duplicated and reordered reads of an honest writer', () => {
    const history = Array.from({ length: 12 }, (_, i) => i + 1);
    const recordAt = (seq: number): FeedRecord => {
      const changes = new Map<string, number>();
      for (let s = 1; s <= seq; s++) changes.set(`s${s % 4}`, s);
      // The record holds the three newest changes only.
      const kept = [...changes].filter(([, s]) => s > seq - 3);
      return rec(seq, kept, { floor: Math.max(0, seq - 3) });
    };
    let rng = 7;
    const random = (): number => (rng = (rng * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 500; trial++) {
      const seen = history.filter(() => random() < 0.5).map(recordAt);
      for (let i = seen.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [seen[i], seen[j]] = [seen[j] as FeedRecord, seen[i] as FeedRecord];
      }
      if (random() < 0.3 && seen.length > 0) seen.push(seen[0] as FeedRecord); // duplicate
      seen.push(recordAt(12)); // the newest one is read eventually
      const plans = follow([[recordAt(1)], ...seen.map((r) => [r])], vouchers(voucher(12)));
      if (plans.some((p) => p.gaps.length > 0)) continue;
      const readAfter = new Map<string, number>(); // service → highest seq covered by a read
      plans.forEach((p, i) => {
        if (i === 0) return;
        const r = seen[i - 1] as FeedRecord;
        for (const s of p.services)
          readAfter.set(s.name, Math.max(readAfter.get(s.name) ?? 0, r.seq));
      });
      for (let s = 2; s <= 12; s++) {
        // Reading a service at record seq r covers its change at s when r >= s.
        expect(readAfter.get(`s${s % 4}`) ?? 0).toBeGreaterThanOrEqual(s);
      }
    }
  });
});
