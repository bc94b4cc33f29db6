import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createChecks, startHealthServer, type HealthServer } from '../../src/runtime/health.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = async (host = '127.0.0.1') => {
  const registry = new Registry();
  new Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(3);
  const liveness = createChecks();
  const readiness = createChecks();
  server = await startHealthServer({
    port: 0,
    host,
    registry,
    liveness,
    readiness,
    logger: createMemoryLogger(),
  });
  const get = async (path: string) => {
    const res = await fetch(
      `http://${host.includes(':') ? `[${host}]` : host}:${server?.port ?? 0}${path}`,
    );
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };
  return { liveness, readiness, get };
};

describe('health server', () => {
  it('serves over IPv6 (an IPv6-only pod is probed and scraped at its IPv6 address)', async () => {
    const { get } = await start('::1');
    expect((await get('/healthz')).status).toBe(200);
  });

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

  it('takes no other method and serves no /leader or /nudge (ADR 0020)', async () => {
    const { get } = await start();
    for (const path of ['/nudge', '/healthz']) {
      const res = await fetch(`http://127.0.0.1:${server?.port ?? 0}${path}`, {
        method: 'POST',
        body: '{}',
      });
      expect(res.status, path).toBe(405);
    }
    expect((await get('/leader')).status).toBe(404);
    expect((await get('/nudge')).status).toBe(404);
  });
});
