import { describe, expect, it } from 'vitest';
import { conflictRows, conflictStatus, type ConflictFigures } from '../../src/bench/conflict.js';

const se = (conditions: unknown): unknown => ({ metadata: { name: 's' }, status: { conditions } });

describe('conflictStatus', () => {
  it('reads the Conflict condition among the others', () => {
    expect(
      conflictStatus(
        se([
          { type: 'Valid', status: 'True' },
          { type: 'Conflict', status: 'True', reason: 'PortConflict' },
        ]),
      ),
    ).toBe('True');
    expect(conflictStatus(se([{ type: 'Conflict', status: 'False' }]))).toBe('False');
  });

  it('is undefined without status, conditions or a Conflict condition', () => {
    expect(conflictStatus({ metadata: { name: 's' } })).toBeUndefined();
    expect(conflictStatus(se(undefined))).toBeUndefined();
    expect(conflictStatus(se([{ type: 'Valid', status: 'True' }]))).toBeUndefined();
    expect(conflictStatus(se([null, 3, { type: 'Conflict' }]))).toBeUndefined();
    expect(conflictStatus(undefined)).toBeUndefined();
  });
});

describe('conflictRows', () => {
  const ours: ConflictFigures = {
    supported: true,
    raised: [4, 1, 2, 3, 5],
    cleared: [0.5, 0.25, 1, 0.75, 2],
  };
  const peer: ConflictFigures = { supported: false, raised: [], cleared: [], probeSeconds: 30 };

  it('gives p50 and max of both directions, and says when a side has no condition', () => {
    expect(conflictRows(ours, peer)).toEqual([
      ['Conflict raised, all exporters, p50 (s)', '3.00', 'not supported'],
      ['Conflict raised, all exporters, max (s)', '5.00', 'not supported'],
      ['Conflict cleared, all exporters, p50 (s)', '0.75', 'not supported'],
      ['Conflict cleared, all exporters, max (s)', '2.00', 'not supported'],
      ['Conflict samples', '5', 'no condition in 30 s'],
    ]);
  });

  it('shows a side that did not measure as a dash, and nothing when neither did', () => {
    expect(conflictRows(ours, undefined).map((r) => r[2])).toEqual(['–', '–', '–', '–', '–']);
    expect(conflictRows(undefined, undefined)).toEqual([]);
  });
});
