import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isNamespaceTerminating } from '../../src/runtime/api-errors.js';
import { createEventRecorder, type EventSink } from '../../src/runtime/events.js';
import type { RecordedEvent } from '../../src/ports/events.js';
import { createMemoryEventRecorder } from '../../src/testing/memory-events.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';
import { settle } from '../helpers/async.js';

describe('isNamespaceTerminating', () => {
  // The body as the API server sends it when NamespaceLifecycle refuses a create.
  const terminating = JSON.stringify({
    kind: 'Status',
    status: 'Failure',
    message:
      'events "web.1" is forbidden: unable to create new content in namespace app because it is being terminated',
    reason: 'Forbidden',
    details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
    code: 403,
  });
  const rbac = JSON.stringify({
    kind: 'Status',
    message: 'events is forbidden: User "x" cannot create resource "events" in API group ""',
    reason: 'Forbidden',
    code: 403,
  });
  it.each([
    [
      'a terminating namespace (string body)',
      new ApiException(403, 'Forbidden', terminating, {}),
      true,
    ],
    [
      'a terminating namespace (parsed body)',
      new ApiException(403, 'Forbidden', JSON.parse(terminating), {}),
      true,
    ],
    ['an RBAC denial', new ApiException(403, 'Forbidden', rbac, {}), false],
    ['a 409', new ApiException(409, 'Conflict', terminating, {}), false],
    ['a plain error', new Error('because it is being terminated'), false],
  ])('%s → %s', (_, error, expected) => {
    expect(isNamespaceTerminating(error)).toBe(expected);
  });
});

const event = (note = 'Service port conflict with cluster c2'): RecordedEvent => ({
  regarding: {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceExport',
    namespace: 'demo',
    name: 'web',
    uid: 'u1',
  },
  type: 'Warning',
  reason: 'ExportConflict',
  action: 'Export',
  note,
});

describe('event recorder', () => {
  it('writes events.k8s.io/v1 Events and drops identical ones inside the window', async () => {
    let now = 1_700_000_000_000;
    const created: { ns: string; body: Record<string, unknown> }[] = [];
    const sink: EventSink = { create: async (ns, body) => void created.push({ ns, body }) };
    const rec = createEventRecorder({
      sink,
      controller: 'cloudmap-mcs.io/export-agent',
      instance: 'pod-1',
      logger: createMemoryLogger(),
      now: () => now,
    });
    rec.record(event());
    rec.record(event());
    rec.record(event('another note'));
    now += 11 * 60_000;
    rec.record(event());
    await settle();
    expect(created).toHaveLength(3);
    expect(created[0]?.ns).toBe('demo');
    expect(created[0]?.body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      reportingController: 'cloudmap-mcs.io/export-agent',
      reportingInstance: 'pod-1',
      reason: 'ExportConflict',
      type: 'Warning',
      action: 'Export',
      regarding: { kind: 'ServiceExport', name: 'web', namespace: 'demo', uid: 'u1' },
    });
    expect(created[0]?.body['eventTime']).toBeInstanceOf(Date);
    const names = created.map((c) => (c.body['metadata'] as { name: string }).name);
    expect(new Set(names).size).toBe(3);
  });

  it('truncates long notes to 1 kB and logs (never throws) when the API refuses', async () => {
    const logger = createMemoryLogger();
    const bodies: Record<string, unknown>[] = [];
    const sink: EventSink = {
      create: async (_ns, body) => {
        bodies.push(body);
        throw new ApiException(403, 'Forbidden', {}, {});
      },
    };
    const rec = createEventRecorder({ sink, controller: 'c', instance: 'i', logger });
    expect(() => rec.record(event('x'.repeat(5_000)))).not.toThrow();
    await settle();
    expect(String(bodies[0]?.['note'])).toHaveLength(1024);
    expect(logger.find('event not recorded')[0]?.fields).toMatchObject({
      reason: 'ExportConflict',
      name: 'web',
    });
  });

  it('a namespace being deleted is a debug line, not a warning; window 0 keeps repeats', async () => {
    const logger = createMemoryLogger();
    const terminating = new ApiException(
      403,
      'Forbidden',
      'unable to create new content in namespace demo because it is being terminated',
      {},
    );
    let calls = 0;
    const sink: EventSink = {
      create: async () => {
        calls += 1;
        throw terminating;
      },
    };
    const rec = createEventRecorder({
      sink,
      controller: 'c',
      instance: 'i',
      logger,
      dedupeWindowMs: 0,
    });
    rec.record(event());
    rec.record(event());
    await settle();
    expect(calls).toBe(2);
    expect(logger.find('event not recorded')).toEqual([]);
    expect(logger.find('event dropped: namespace terminating')).toHaveLength(2);
  });

  it('the memory recorder finds events by object and reason', () => {
    const rec = createMemoryEventRecorder();
    rec.record(event());
    expect(rec.about('demo/web', 'ExportConflict')).toHaveLength(1);
    expect(rec.about('demo/other')).toEqual([]);
  });
});
