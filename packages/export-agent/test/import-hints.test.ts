import { describe, expect, it } from 'vitest';
import type { V1Lease } from '@kubernetes/client-node';
import { FakeClock } from '@cloudmap-mcs/core/testing';
import { createLeaseLiveness } from '../src/kube/import-hints.js';

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
