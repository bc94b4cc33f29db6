import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCloudMapClient } from '../../src/cloudmap/client.js';
import { createServiceDiscoveryClient } from '../../src/cloudmap/sdk-client.js';
import { createSdkCloudMapPort } from '../../src/cloudmap/sdk-port.js';
import { CloudMapError } from '../../src/ports/cloudmap-port.js';
import { unlimited } from '../../src/testing/index.js';

/**
 * A Cloud Map endpoint on a real TCP server that can turn into a black hole: while `holding`,
 * connections are accepted and requests read but nothing is ever answered or reset (a stuck
 * proxy or NAT). `trickle`: the answer's headers and part of its body, then nothing.
 */
const server = {
  holding: false,
  trickle: false,
  connections: 0,
  open: new Set<Socket>(),
  held: [] as (Socket | ServerResponse)[],
};
const http = createHttpServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (server.holding) {
      server.held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    if (server.trickle) {
      server.held.push(res);
      res.write('{"InstancesRevision": ');
      return;
    }
    res.end(JSON.stringify({ InstancesRevision: 7 }));
  });
});
const tcp = createServer((socket) => {
  server.connections += 1;
  server.open.add(socket);
  socket.on('close', () => server.open.delete(socket));
  if (server.holding) {
    // Read and drop what comes (so a close is seen), never answer.
    socket.resume();
    server.held.push(socket);
  } else http.emit('connection', socket);
});
let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${String((tcp.address() as AddressInfo).port)}`;
});
afterAll(async () => {
  for (const s of server.open) s.destroy();
  await new Promise<void>((r) => tcp.close(() => r()));
});
beforeEach(() => {
  heal();
  server.connections = 0;
});
function heal(): void {
  server.holding = false;
  server.trickle = false;
  // What was held stays held: the connections a black hole swallowed never answer again.
}

const sdk = (requestTimeoutMs: number) =>
  createServiceDiscoveryClient({
    region: 'us-west-2',
    endpoint,
    credentials: async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }),
    requestTimeoutMs,
  });
const client = (requestTimeoutMs: number, deadlineMs: number) =>
  createCloudMapClient(createSdkCloudMapPort(sdk(requestTimeoutMs)), {
    limiter: unlimited,
    retry: { deadlineMs },
  });

async function timed<T>(p: Promise<T>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  let error: unknown;
  await p.catch((e: unknown) => (error = e));
  return { ms: performance.now() - started, error };
}

describe('Cloud Map calls on a connection that never answers', () => {
  it('the SDK request timeout fails the request, as a retryable network error', async () => {
    const port = createSdkCloudMapPort(sdk(300));
    server.holding = true;
    const { ms, error } = await timed(port.discoverInstancesRevision('demo', 'web'));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(CloudMapError);
    expect(error).toMatchObject({ code: 'ServiceUnavailable', retryable: true });
    expect((error as Error).message).toMatch(
      /^discoverInstancesRevision: TimeoutError: .*300 ms requestTimeout/,
    );
  });

  it('the call deadline ends the retries; after the heal the next call opens a fresh connection', async () => {
    const cm = client(300, 1_000);
    expect(await cm.discoverInstancesRevision('demo', 'web')).toBe(7);
    const before = server.connections;
    server.holding = true;
    const { ms, error } = await timed(cm.discoverInstancesRevision('demo', 'web'));
    // Retried on fresh connections (each timed-out one is destroyed), then the deadline.
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(2_500);
    expect(error).toMatchObject({ code: 'ServiceUnavailable', retryable: true });
    // The deadline's own error, or the last attempt's timeout when no retry fitted before it.
    expect((error as Error).message).toMatch(
      /^discoverInstancesRevision: (no answer from Cloud Map within the call deadline of 1 s|TimeoutError: .*300 ms requestTimeout)/,
    );
    expect(server.connections - before).toBeGreaterThanOrEqual(2);
    heal();
    const healedAt = server.connections;
    expect(await cm.discoverInstancesRevision('demo', 'web')).toBe(7);
    expect(server.connections).toBe(healedAt + 1);
    await cm.close();
  });

  it('after a request timeout the idle keep-alive connections are dropped too', async () => {
    const port = createSdkCloudMapPort(sdk(300));
    const earlier = new Set(server.open);
    // Two calls at once: two connections, both idle in the pool afterwards.
    await Promise.all([
      port.discoverInstancesRevision('demo', 'a'),
      port.discoverInstancesRevision('demo', 'b'),
    ]);
    expect(server.connections).toBe(2);
    const idle = [...server.open].filter((s) => !earlier.has(s));
    expect(idle).toHaveLength(2);
    server.holding = true;
    await timed(port.discoverInstancesRevision('demo', 'web'));
    await new Promise((r) => setTimeout(r, 50));
    // One carried the unanswered request, the other was idle: both are gone.
    for (const s of idle) expect(server.open.has(s)).toBe(false);
  });

  it('an answer whose body never finishes fails at the call deadline', async () => {
    const cm = client(5_000, 600);
    server.trickle = true;
    const { ms, error } = await timed(cm.discoverInstancesRevision('demo', 'web'));
    expect(ms).toBeLessThan(2_000);
    expect((error as Error).message).toMatch(/within the call deadline of 0.6 s/);
    heal();
    expect(await cm.discoverInstancesRevision('demo', 'web')).toBe(7);
    await cm.close();
  });
});
