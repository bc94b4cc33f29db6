import { describe, expect, it } from 'vitest';
import { setConditions } from '../../src/kube/conditions.js';

const t0 = '2026-01-01T00:00:00.000Z';
const now = new Date('2026-02-02T00:00:00.000Z');
const ready = {
  type: 'Ready',
  status: 'True' as const,
  reason: 'Exported',
  message: 'm',
  lastTransitionTime: t0,
};

describe('setConditions', () => {
  it('reports no change for identical conditions', () => {
    const { changed, conditions } = setConditions(
      [ready],
      [{ type: 'Ready', status: 'True', reason: 'Exported', message: 'm' }],
      now,
    );
    expect(changed).toBe(false);
    expect(conditions).toEqual([ready]);
  });
  it('keeps lastTransitionTime when only the message changes', () => {
    const { changed, conditions } = setConditions(
      [ready],
      [{ type: 'Ready', status: 'True', reason: 'Exported', message: 'n' }],
      now,
    );
    expect(changed).toBe(true);
    expect(conditions[0]?.lastTransitionTime).toBe(t0);
  });
  it('moves lastTransitionTime when the status flips, keeps other types', () => {
    const valid = { ...ready, type: 'Valid', reason: 'Valid' };
    const { conditions } = setConditions(
      [valid, ready],
      [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'm' }],
      now,
    );
    expect(conditions).toEqual([
      valid,
      {
        type: 'Ready',
        status: 'False',
        reason: 'Pending',
        message: 'm',
        lastTransitionTime: now.toISOString(),
      },
    ]);
  });
});
