import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@cloudmap-mcs/e2e';
import { startAgentProcess, type AgentProcess } from './int/agent-process.js';

// Start-up behaviour against a minimal fake API server (no harness needed): missing CRDs are a
// clear exit, a missing identity keeps the agent running but not ready, saying what to create.
interface FakeApi {
  kubeconfig: string;
  requests: string[];
  close(): Promise<void>;
}

async function fakeApiServer(crds: boolean): Promise<FakeApi> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url.pathname);
    const custom =
      url.pathname.startsWith('/apis/multicluster.x-k8s.io') ||
      url.pathname.startsWith('/apis/about.k8s.io');
    if (custom && !crds) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        }),
      );
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      return; // an open, silent watch
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'List',
        apiVersion: 'v1',
        metadata: { resourceVersion: '1' },
        items: [],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'export-agent-startup-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'fake',
          cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true },
        },
      ],
      users: [{ name: 'fake', user: { token: 'x' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
      'current-context': 'fake',
    }),
  );
  return {
    kubeconfig,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }).finally(() => rmSync(dir, { recursive: true, force: true })),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const aws = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
  AWS_ENDPOINT_URL_SERVICEDISCOVERY: 'http://127.0.0.1:9',
};

describe('export agent start-up', () => {
  it('exits 2 naming the CRD when ServiceExport is not installed', async () => {
    const api = await fakeApiServer(false);
    cleanups.push(api.close);
    const agent = startAgentProcess(api.kubeconfig, aws);
    expect(await agent.exited).toBe(2);
    expect(agent.logs.join('\n')).toMatch(
      /The serviceexports\.multicluster\.x-k8s\.io CRD \(version v1beta1\) is not installed in this cluster\. Install the CRDs first/,
    );
  });

  it('exits 2 on a bad flag', async () => {
    const agent = startAgentProcess('/nonexistent', aws, ['--workers', '0']);
    expect(await agent.exited).toBe(2);
    expect(agent.logs.join('\n')).toMatch(/--workers must be a positive number/);
  });

  it('without ClusterProperties it runs, not ready, and says what to create', async () => {
    const api = await fakeApiServer(true);
    cleanups.push(api.close);
    const agent: AgentProcess = startAgentProcess(api.kubeconfig, aws);
    cleanups.push(() => agent.stop());
    const readyz = await waitFor(
      'readyz answers',
      async () => {
        const port = agent.logs.join('\n').match(/"address":"[^"]*:(\d+)"/)?.[1];
        if (port === undefined) return undefined;
        const res = await fetch(`http://127.0.0.1:${port}/readyz?verbose`);
        const text = await res.text();
        return text.includes('[+]caches ok') ? { status: res.status, text } : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(readyz.status).toBe(503);
    expect(readyz.text).toMatch(/\[-\]cluster-identity failed: .*cluster\.clusterset\.k8s\.io/s);
    expect(await agent.stop()).toBe(0);
  });
});
