import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reuseConnections } from '../../src/runtime/kubeconfig.js';

// A local HTTPS "API server" that answers every request with an empty NamespaceList and counts
// TLS handshakes: the figure that tells a reused connection from a new one per request.

let dir: string;
let server: Server;
let serverUrl: string;
let handshakes = 0;

function selfSigned(name: string): void {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-days', '1', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`),
  ], { stdio: 'ignore' }); // prettier-ignore
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  for (const name of ['server', 'client-a', 'client-b']) selfSigned(name);
  copyFileSync(join(dir, 'client-a.crt'), join(dir, 'client.crt'));
  copyFileSync(join(dir, 'client-a.key'), join(dir, 'client.key'));
  server = createServer(
    { key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) },
    (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items: [] }));
    },
  );
  server.on('secureConnection', () => (handshakes += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'local', server: serverUrl, caFile: join(dir, 'server.crt'), skipTLSVerify: false },
    ],
    users: [{ name: 'agent', certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') }],
    contexts: [{ name: 'local', cluster: 'local', user: 'agent' }],
    currentContext: 'local',
  });
  return kc;
}

async function handshakesFor(api: CoreV1Api, requests: number): Promise<number> {
  const before = handshakes;
  for (let i = 0; i < requests; i += 1) await api.listNamespace();
  return handshakes - before;
}

describe('reuseConnections', () => {
  it('client-node alone opens a new TLS connection for every request (why the fix exists)', async () => {
    // If an upgrade makes this pass no longer, client-node pools by itself: drop the fix.
    expect(await handshakesFor(kubeConfig().makeApiClient(CoreV1Api), 5)).toBe(5);
  });

  // undici may open a second connection while the first response is still being released, so
  // the warm-up is one or two handshakes; after it, requests open no connection at all.
  it('after warm-up, requests reuse their connections: no new handshake', async () => {
    const kc = kubeConfig();
    reuseConnections(kc);
    const api = kc.makeApiClient(CoreV1Api);
    const warmUp = await handshakesFor(api, 3);
    expect(warmUp).toBeGreaterThanOrEqual(1);
    expect(warmUp).toBeLessThanOrEqual(2);
    expect(await handshakesFor(api, 20)).toBe(0);
  });

  it('a rotated client certificate gets new connections, then reuses those', async () => {
    const kc = kubeConfig();
    reuseConnections(kc);
    const api = kc.makeApiClient(CoreV1Api);
    await handshakesFor(api, 3);
    expect(await handshakesFor(api, 3)).toBe(0);
    copyFileSync(join(dir, 'client-b.crt'), join(dir, 'client.crt'));
    copyFileSync(join(dir, 'client-b.key'), join(dir, 'client.key'));
    expect(await handshakesFor(api, 3)).toBeGreaterThanOrEqual(1);
    expect(await handshakesFor(api, 3)).toBe(0);
  });
});
