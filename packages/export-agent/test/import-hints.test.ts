import { describe, expect, it } from 'vitest';
import type { V1Lease } from '@kubernetes/client-node';
import { FakeClock } from '@cloudmap-mcs/core/testing';
import {
  ANNOTATION_LEADER_ADDRESS,
  ANNOTATION_LEADER_CHALLENGE,
  ANNOTATION_LEADER_LEASE_SECONDS,
  QUIET_LEASE_SECONDS,
} from '@cloudmap-mcs/core/runtime';
import { createLeaseLiveness } from '../src/kube/lease-liveness.js';

const WALL = 1_800_000_000_000;

const lease = (rv: string, holder: string | undefined, renewedAtWallMs: number): V1Lease => ({
  metadata: { name: 'import', namespace: 'sys', resourceVersion: rv },
  spec: {
    ...(holder === undefined ? {} : { holderIdentity: holder }),
    leaseDurationSeconds: 15,
    renewTime: new Date(renewedAtWallMs),
  },
});

describe('import agent liveness from its Lease (import-hints.ts)', () => {
  it('a Lease first seen is live when its renewTime is recent, and stays live while renewals arrive', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    expect(l.live()).toBe(false);
    l.observe('add', lease('1', 'pod-a', WALL - 2_000));
    expect(l.live()).toBe(true);
    // Renewals every 5 s keep it live, whatever the holder's clock says.
    for (let i = 2; i < 10; i++) {
      clock.advance(5_000);
      l.observe('update', lease(String(i), 'pod-a', 0));
      expect(l.live()).toBe(true);
    }
    // No renewal for the Lease's duration plus 5 s of slack: not live.
    clock.advance(19_999);
    expect(l.live()).toBe(true);
    clock.advance(1);
    expect(l.live()).toBe(false);
    // A renewal brings it back.
    l.observe('update', lease('11', 'pod-b', 0));
    expect(l.live()).toBe(true);
  });

  it('an old Lease, a released one (no holder) and a deleted one are not live', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    l.observe('add', lease('1', 'pod-a', WALL - 3_600_000));
    expect(l.live()).toBe(false);
    l.observe('update', lease('2', undefined, WALL));
    expect(l.live()).toBe(false);
    l.observe('update', lease('3', 'pod-a', WALL));
    expect(l.live()).toBe(true);
    l.observe('delete', lease('3', 'pod-a', WALL));
    expect(l.live()).toBe(false);
  });

  it('an unchanged resourceVersion (a relist) is no renewal', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    l.observe('add', lease('7', 'pod-a', WALL));
    clock.advance(15_000);
    l.observe('update', lease('7', 'pod-a', WALL));
    clock.advance(5_000);
    expect(l.live()).toBe(false);
  });
});

describe('a quiet import agent leader (ADR 0019)', () => {
  const quiet = (
    rv: string,
    holder: string,
    wallMs: number,
    extra: Record<string, string> = {},
  ) => {
    const l = lease(rv, holder, wallMs);
    l.spec = { ...l.spec, leaseDurationSeconds: QUIET_LEASE_SECONDS };
    l.metadata = {
      ...l.metadata,
      annotations: {
        [ANNOTATION_LEADER_ADDRESS]: '10.0.0.7:8081',
        [ANNOTATION_LEADER_LEASE_SECONDS]: '15',
        ...extra,
      },
    };
    return l;
  };

  it('is live while it answers, for its own lease duration, not the hour on the Lease', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    l.observe('add', quiet('1', 'pod-a', WALL - 600_000));
    // Its renewTime is when it took the Lease: asked first, not judged by it.
    expect(l.live()).toBe(false);
    expect(l.quietHolder()).toEqual({ holder: 'pod-a', address: '10.0.0.7:8081' });
    l.confirm('pod-a');
    expect(l.live()).toBe(true);
    clock.advance(19_999);
    expect(l.live()).toBe(true);
    clock.advance(1);
    expect(l.live()).toBe(false);
    // Another replica's answer is no answer of the holder.
    l.confirm('pod-b');
    expect(l.live()).toBe(false);
  });

  it('a challenge is no sign of life; the answer to it, or a new holder, is', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    l.observe('add', quiet('1', 'pod-a', WALL));
    l.confirm('pod-a');
    clock.advance(18_000);
    l.observe('update', quiet('2', 'pod-a', WALL, { [ANNOTATION_LEADER_CHALLENGE]: 'pod-b t' }));
    clock.advance(3_000);
    expect(l.live()).toBe(false);
    l.observe('update', quiet('3', 'pod-a', WALL + 21_000)); // answered: renewed
    expect(l.live()).toBe(true);
    clock.advance(21_000);
    expect(l.live()).toBe(false);
    l.observe('update', quiet('4', 'pod-b', WALL + 42_000)); // taken over
    expect(l.live()).toBe(true);
    expect(l.quietHolder()?.holder).toBe('pod-b');
  });

  it('an unusable address is a renewing holder, judged by renewals', () => {
    const clock = new FakeClock();
    const l = createLeaseLiveness(clock, () => WALL + clock.now());
    const bad = quiet('1', 'pod-a', WALL, { [ANNOTATION_LEADER_ADDRESS]: 'evil.example:80' });
    bad.spec = { ...bad.spec, leaseDurationSeconds: 15 };
    l.observe('add', bad);
    expect(l.quietHolder()).toBeUndefined();
    expect(l.live()).toBe(true);
    clock.advance(20_000);
    expect(l.live()).toBe(false);
  });
});
