/**
 * The migration test's traffic client (issue 35), started with nsenter in the network
 * namespace of a client pod in c2, so it resolves and connects exactly as that pod would:
 * - new connections: resolve `<svc>.<ns>.svc.clusterset.local` through the cluster's DNS
 *   (CoreDNS, no cache in this process), then one HTTP GET on a fresh TCP connection, one
 *   after the other, `--interval-ms` apart;
 * - one long-lived connection: a keep-alive connection to the clusterset IP resolved at the
 *   start, one GET on it every `--long-interval-ms`; a second socket would mean it broke.
 * Every answer must be HTTP 200 with the echo server's `pod=` line. The figures are written
 * to `--out` (JSON) every second and on SIGTERM, when it exits.
 * The count starts at the first answer: until then the service is not yet served where the
 * client stands (a derived Service created a moment ago is not yet programmed by kube-proxy:
 * ENETUNREACH), which is the cluster starting up, not the migration. Those warm-up attempts
 * are reported apart (`warmUp`), and the test starts migrating only after the count began.
 * Usage: node client.js --dns IP --name FQDN --out FILE [--interval-ms 100] [--long-interval-ms 250]
 */
import { Resolver } from 'node:dns/promises';
import { writeFileSync, renameSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

export interface ClientFigures {
  startedAt: string;
  seconds: number;
  sent: number;
  ok: number;
  failed: number;
  /** Longest time between two successful answers on new connections, ms. */
  maxGapMs: number;
  /** Addresses DNS answered, with how many requests went to each. */
  ips: Record<string, number>;
  /** Which cluster answered, with counts (from the echo's `cluster=`). */
  clusters: Record<string, number>;
  long: { ip: string; sent: number; ok: number; failed: number; sockets: number; maxGapMs: number };
  /** Attempts before the first answer (not counted above), and the time until it. */
  warmUp: { attempts: number; ms: number; lastError: string };
  /** The first failures, for diagnosis. */
  failures: { at: string; kind: string; error: string }[];
}

const { values } = parseArgs({
  options: {
    dns: { type: 'string' },
    name: { type: 'string' },
    out: { type: 'string' },
    'interval-ms': { type: 'string', default: '100' },
    'long-interval-ms': { type: 'string', default: '250' },
  },
});
const interval = Number(values['interval-ms']);
const longInterval = Number(values['long-interval-ms']);
const resolver = new Resolver({ timeout: 1000, tries: 3 });
resolver.setServers([values.dns!]);
const t0 = Date.now();
const f: ClientFigures = {
  startedAt: new Date(t0).toISOString(),
  seconds: 0,
  sent: 0,
  ok: 0,
  failed: 0,
  maxGapMs: 0,
  ips: {},
  clusters: {},
  long: { ip: '', sent: 0, ok: 0, failed: 0, sockets: 0, maxGapMs: 0 },
  warmUp: { attempts: 0, ms: 0, lastError: '' },
  failures: [],
};
let stopping = false;

function fail(kind: string, error: unknown): void {
  if (f.failures.length < 50)
    f.failures.push({
      at: new Date().toISOString(),
      kind,
      error: error instanceof Error ? error.message : String(error),
    });
}

function get(ip: string, agent: http.Agent | false): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: ip, port: 80, path: '/', agent, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 && /pod=/.test(body)
          ? resolve(body)
          : reject(new Error(`HTTP ${String(res.statusCode)}: ${body.slice(0, 80)}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout after 3 s')));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newConnections(): Promise<void> {
  let lastOk = Date.now();
  while (!stopping) {
    const started = Date.now();
    f.sent++;
    try {
      const [ip] = await resolver.resolve4(values.name!);
      if (ip === undefined) throw new Error('no A record');
      f.ips[ip] = (f.ips[ip] ?? 0) + 1;
      const body = await get(ip, false);
      const cluster = /cluster=(\S+)/.exec(body)?.[1] ?? '?';
      f.clusters[cluster] = (f.clusters[cluster] ?? 0) + 1;
      f.ok++;
      f.maxGapMs = Math.max(f.maxGapMs, Date.now() - lastOk);
      lastOk = Date.now();
    } catch (error) {
      f.failed++;
      fail('new-connection', error);
    }
    await sleep(Math.max(0, interval - (Date.now() - started)));
  }
}

async function longLived(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  agent.on('free', () => undefined);
  const [ip] = await resolver.resolve4(values.name!);
  f.long.ip = ip ?? '';
  const seen = new WeakSet<object>();
  let lastOk = Date.now();
  while (!stopping) {
    f.long.sent++;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get({ host: f.long.ip, port: 80, path: '/', agent, timeout: 3000 });
        req.on('socket', (s) => {
          if (!seen.has(s)) {
            seen.add(s);
            f.long.sockets++;
          }
        });
        req.on('timeout', () => req.destroy(new Error('timeout after 3 s')));
        req.on('error', reject);
        req.on('response', (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        });
      });
      f.long.ok++;
      f.long.maxGapMs = Math.max(f.long.maxGapMs, Date.now() - lastOk);
      lastOk = Date.now();
    } catch (error) {
      f.long.failed++;
      fail('long-lived', error);
    }
    await sleep(longInterval);
  }
  agent.destroy();
}

/** Until one GET on a fresh connection answers (at most 60 s): the warm-up, not counted. */
async function warmUp(): Promise<void> {
  while (!stopping) {
    f.warmUp.attempts++;
    try {
      const [ip] = await resolver.resolve4(values.name!);
      if (ip === undefined) throw new Error('no A record');
      await get(ip, false);
      f.warmUp.ms = Date.now() - t0;
      return;
    } catch (error) {
      f.warmUp.lastError = error instanceof Error ? error.message : String(error);
      if (Date.now() - t0 > 60_000) throw new Error(`no answer in 60 s: ${f.warmUp.lastError}`);
    }
    await sleep(interval);
  }
}

function write(): void {
  f.seconds = (Date.now() - t0) / 1000;
  const tmp = `${values.out!}.tmp`;
  writeFileSync(tmp, JSON.stringify(f, null, 2));
  renameSync(tmp, values.out!);
}

const timer = setInterval(write, 1000);
process.on('SIGTERM', () => {
  stopping = true;
});
await warmUp();
await Promise.all([newConnections(), longLived()]);
clearInterval(timer);
write();
