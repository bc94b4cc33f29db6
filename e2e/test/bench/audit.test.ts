import { describe, expect, it } from 'vitest';
import { parseAuditLog, writesByResource } from '../../src/bench/audit.js';

const line = (
  user: string,
  verb: string,
  resource: string,
  at: string,
  extra: object = {},
): string =>
  JSON.stringify({
    kind: 'Event',
    stage: 'ResponseComplete',
    verb,
    user: { username: user },
    objectRef: { resource, ...extra },
    stageTimestamp: at,
  });

describe('audit log counting', () => {
  const log = [
    line('sa:a', 'update', 'leases', '2026-12-01T06:00:01.000000Z'),
    line('sa:a', 'patch', 'serviceimports', '2026-12-01T06:00:02.000000Z', {
      subresource: 'status',
    }),
    line('sa:b', 'create', 'endpointslices', '2026-12-01T06:00:03.000000Z'),
    line('sa:a', 'create', 'events', '2026-12-01T06:00:09.000000Z'),
    JSON.stringify({ stage: 'RequestReceived', verb: 'create', user: { username: 'sa:a' } }),
    'not json',
    '',
  ].join('\n');

  it('keeps ResponseComplete events, names subresources, skips malformed lines', () => {
    const writes = parseAuditLog(log);
    expect(writes.map((w) => w.resource)).toEqual([
      'leases',
      'serviceimports/status',
      'endpointslices',
      'events',
    ]);
  });

  it('counts one identity set inside [from, to)', () => {
    const writes = parseAuditLog(log);
    const from = Date.parse('2026-12-01T06:00:01Z');
    const to = Date.parse('2026-12-01T06:00:09Z');
    expect(writesByResource(writes, new Set(['sa:a']), from, to)).toEqual({
      leases: 1,
      'serviceimports/status': 1,
    });
    expect(writesByResource(writes, new Set(['sa:a', 'sa:b']), from, to + 1)).toEqual({
      leases: 1,
      'serviceimports/status': 1,
      endpointslices: 1,
      events: 1,
    });
  });
});
