import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CloudMapError } from '../../src/ports/cloudmap-port.js';
import { logFields } from '../../src/logging/log-fields.js';
import { createLogger } from '../../src/runtime/logger.js';

const capture = () => {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { stream, lines };
};

describe('createLogger (winston)', () => {
  it('writes JSON lines with child fields, default fields and serialized errors with cause', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', stream, defaultFields: { agent: 'export-agent' } });
    const cause = new Error('socket hang up');
    log
      .child({ [logFields.controller]: 'serviceexport', [logFields.key]: 'ns/a' })
      .error('reconcile failed', {
        [logFields.error]: new CloudMapError('ServiceUnavailable', 'boom', 'listInstances', {
          cause,
          retryable: true,
        }),
      });
    log.debug('hidden');
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: 'error',
      message: 'reconcile failed',
      agent: 'export-agent',
      controller: 'serviceexport',
      key: 'ns/a',
      err: {
        name: 'CloudMapError',
        message: 'boom',
        code: 'ServiceUnavailable',
        retryable: true,
        cause: { name: 'Error', message: 'socket hang up' },
      },
    });
    expect(entry['timestamp']).toBeTypeOf('string');
  });

  it('text format is one human line per entry', async () => {
    const { stream, lines } = capture();
    createLogger({ level: 'debug', format: 'text', stream }).debug('hello', { a: 1 });
    await new Promise((r) => setImmediate(r));
    expect(lines[0]).toMatch(/ debug hello \{"a":1\}$/);
  });
});
