import { describe, expect, it } from 'vitest';
import {
  EXTERNAL_TASK_CIDRS,
  TASKS_V4,
  TASKS_V6,
  renderExternal,
} from '../../src/demo/external.js';
import { inCidr } from '../../src/network.js';

describe('the ECS-style tasks', () => {
  // The chart's import agents allow only these ranges (and the pod ranges): a task outside
  // them is refused, and the demo waits for it in vain (it did on IPv6-only real nodes).
  it('have addresses the import agents are told to allow, in each family', () => {
    for (const t of [...TASKS_V4, ...TASKS_V6]) {
      const address = t.ipv4 ?? t.ipv6 ?? '';
      expect(
        EXTERNAL_TASK_CIDRS.some((c) => inCidr(address, c)),
        address,
      ).toBe(true);
    }
    expect(TASKS_V6.every((t) => t.ipv6 !== undefined && t.ipv4 === undefined)).toBe(true);
  });
});

describe('renderExternal', () => {
  it('prints what each cluster holds, not what was registered', () => {
    const lines = renderExternal('demo', 3, [
      {
        cluster: 'c1',
        ready: ['10.200.0.11', '10.200.0.12'],
        notReady: ['10.200.0.13'],
        sourceClusters: ['cloudmap.ecs-apps.payments'],
        condition: 'Imported: 2 healthy, 1 unhealthy (not ready), 0 refused instance(s)',
      },
      { cluster: 'c2', ready: [], notReady: [], sourceClusters: [], condition: 'Pending' },
    ]);
    expect(lines[0]).toContain('ecs-apps/payments: 3 tasks registered');
    expect(lines[1]).toBe(
      '  c1  ServiceImport demo/payments  ready: 10.200.0.11 10.200.0.12  not ready (unhealthy): 10.200.0.13  source-cluster cloudmap.ecs-apps.payments',
    );
    expect(lines[2]).toBe(
      '  c2  ServiceImport demo/payments  ready: none  not ready (unhealthy): none  source-cluster none',
    );
    expect(lines[3]).toBe(
      '  status: Imported: 2 healthy, 1 unhealthy (not ready), 0 refused instance(s)',
    );
  });
});
