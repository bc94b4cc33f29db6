import { describe, expect, it } from 'vitest';
import { renderExternal } from '../../src/demo/external.js';

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
