import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createChecks, startHealthServer, type HealthServer } from '../../src/runtime/health.js';
import { parseLeaderStatus, probeLeader } from '../../src/runtime/leader-probe.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = async () => {
  const registry = new Registry();
  new Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(3);
  const liveness = createChecks();
  const readiness = createChecks();
  server = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    registry,
    liveness,
    readiness,
    logger: createMemoryLogger(),
  });
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${server?.port ?? 0}${path}`);
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };
  return { liveness, readiness, get };
};

describe('health server', () => {
  it('readyz fails with each failing check and its message, then passes', async () => {
    const { readiness, get } = await start();
    readiness.set('informers', false, 'waiting for serviceexports');
    readiness.add('identity', () => ({
      ok: false,
      message: 'create ClusterProperty clusterset.k8s.io',
    }));
    readiness.set('leader', true);
    const bad = await get('/readyz');
    expect(bad.status).toBe(503);
    expect(bad.text).toBe(
      '[-]informers failed: waiting for serviceexports\n[-]identity failed: create ClusterProperty clusterset.k8s.io\nreadyz check failed\n',
    );
    readiness.set('informers', true);
    readiness.add('identity', () => ({ ok: true }));
    const good = await get('/readyz?verbose');
    expect(good.status).toBe(200);
    expect(good.text).toBe('[+]informers ok\n[+]identity ok\n[+]leader ok\nreadyz check passed\n');
  });

  it('healthz is independent of readiness; a throwing check fails', async () => {
    const { liveness, readiness, get } = await start();
    readiness.set('identity', false, 'missing');
    expect((await get('/healthz')).status).toBe(200);
    liveness.add('loop', () => {
      throw new Error('stuck');
    });
    const res = await get('/healthz');
    expect(res.status).toBe(503);
    expect(res.text).toContain('[-]loop failed: check threw: Error: stuck');
  });

  it('serves Prometheus metrics and 404s elsewhere', async () => {
    const { get } = await start();
    const m = await get('/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toContain('text/plain');
    expect(m.text).toContain('demo_total 3');
    expect((await get('/nope')).status).toBe(404);
  });

  it('serves POST routes with a body limit: 413 past it, 405 for other methods on the path', async () => {
    await start();
    const bodies: string[] = [];
    server?.route('/nudge', {
      maxBodyBytes: 16,
      handle: (body) => {
        bodies.push(body);
        return body === 'bad' ? { status: 400, body: 'refused' } : { status: 202 };
      },
    });
    const post = async (body: string) => {
      const res = await fetch(`http://127.0.0.1:${server?.port ?? 0}/nudge`, {
        method: 'POST',
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    expect((await post('{"a":1}')).status).toBe(202);
    expect(await post('bad')).toEqual({ status: 400, text: 'refused\n' });
    expect((await post('x'.repeat(17))).status).toBe(413);
    // A body past the limit without a declared length (chunked) is refused too.
    const chunked = await fetch(`http://127.0.0.1:${server?.port ?? 0}/nudge`, {
      method: 'POST',
      body: new Blob(['y'.repeat(40)]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(bodies).toEqual(['{"a":1}', 'bad']);
    const get = await fetch(`http://127.0.0.1:${server?.port ?? 0}/nudge`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('GET /leader and probeLeader (ADR 0019)', () => {
  it('answers the elector status; a probe accepts only the leader of that Lease as that holder', async () => {
    const { get } = await start();
    const address = `127.0.0.1:${String(server?.port)}`;
    const expected = { lease: 'ns/agent', identity: 'pod-a' };
    expect((await get('/leader')).status).toBe(404);
    await expect(probeLeader(address, expected, 1_000)).rejects.toThrow('HTTP 404');
    let leading = true;
    server?.leader(() => ({ lease: 'ns/agent', identity: 'pod-a', leading }));
    const answer = await get('/leader');
    expect(answer.type).toBe('application/json');
    expect(JSON.parse(answer.text)).toEqual({
      lease: 'ns/agent',
      identity: 'pod-a',
      leading: true,
    });
    await expect(probeLeader(address, expected, 1_000)).resolves.toBeUndefined();
    await expect(probeLeader(address, { ...expected, identity: 'pod-b' }, 1_000)).rejects.toThrow(
      'is pod-a, not pod-b',
    );
    await expect(probeLeader(address, { ...expected, lease: 'ns/other' }, 1_000)).rejects.toThrow(
      'serves the Lease ns/agent',
    );
    leading = false;
    await expect(probeLeader(address, expected, 1_000)).rejects.toThrow('does not lead');
  });

  it('a probe of nothing, of a silent peer or of junk fails with the reason', async () => {
    const expected = { lease: 'ns/agent', identity: 'pod-a' };
    const silent = createServer(() => {}); // accepts, never answers
    const junk = createServer((_req, res) => res.end('x'.repeat(10_000)));
    await Promise.all(
      [silent, junk].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))),
    );
    const at = (s: ReturnType<typeof createServer>) =>
      `127.0.0.1:${String((s.address() as AddressInfo).port)}`;
    const [silentAt, junkAt] = [at(silent), at(junk)];
    try {
      await expect(probeLeader(silentAt, expected, 200)).rejects.toThrow('no answer within 200 ms');
      await expect(probeLeader(junkAt, expected, 1_000)).rejects.toThrow('too long');
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
      await expect(probeLeader(silentAt, expected, 1_000)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      junk.close();
    }
    expect(parseLeaderStatus('{"lease":"a","identity":"b"}')).toBe(
      'not {lease, identity, leading}',
    );
    expect(parseLeaderStatus('[')).toBe('not JSON');
  });
});
