import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import type { LeaderStatus } from './leader-probe.js';

export interface CheckResult {
  ok: boolean;
  /** Why not ok, in words an operator can act on (e.g. the ClusterProperty YAML to apply). */
  message?: string;
}

/** Named checks; a state can be set (`set`) or computed on each probe (`add`). */
export interface Checks {
  set(name: string, ok: boolean, message?: string): void;
  add(name: string, check: () => CheckResult): void;
  remove(name: string): void;
  evaluate(): { ok: boolean; results: (CheckResult & { name: string })[] };
}

export function createChecks(): Checks {
  const checks = new Map<string, () => CheckResult>();
  return {
    set(name, ok, message) {
      const result: CheckResult = message === undefined ? { ok } : { ok, message };
      checks.set(name, () => result);
    },
    add: (name, check) => void checks.set(name, check),
    remove: (name) => void checks.delete(name),
    evaluate() {
      const results = [...checks].map(([name, check]) => {
        try {
          return { name, ...check() };
        } catch (error) {
          return { name, ok: false, message: `check threw: ${String(error)}` };
        }
      });
      return { ok: results.every((r) => r.ok), results };
    },
  };
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  /** Served on /metrics in the Prometheus text format. */
  registry: Registry;
  /** /healthz: the process works (e.g. not deadlocked); failing restarts the Pod. */
  liveness: Checks;
  /** /readyz: the agent does its job (identity valid, caches synced, leading or standby). */
  readiness: Checks;
  logger: Logger;
}

/** What a POST route answers: a status code and an optional plain-text body. */
export interface PostReply {
  status: number;
  body?: string;
}

/**
 * A POST handler on the health port (the import agent's /nudge, ADR 0018 decision 11). It gets
 * the body as text, at most `maxBodyBytes` long: a longer body is answered 413 without being
 * buffered, so a hostile client cannot make the agent hold more than that.
 */
export interface PostRoute {
  maxBodyBytes: number;
  handle(body: string): PostReply;
}

export interface HealthServer {
  readonly port: number;
  /** Adds (or replaces) the POST handler of `path`; other methods on it are refused (405). */
  route(path: string, route: PostRoute): void;
  /** Serves `GET /leader` (ADR 0019): `status()` as JSON; 404 until set. */
  leader(status: () => LeaderStatus): void;
  close(): Promise<void>;
}

/** Reads a request body up to `limit` bytes; undefined (and the request drained) past it. */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) {
      req.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(undefined));
  });
}

function servePost(req: IncomingMessage, res: ServerResponse, route: PostRoute): void {
  void readBody(req, route.maxBodyBytes).then((body) => {
    if (body === undefined) {
      res.writeHead(413).end();
      return;
    }
    let reply: PostReply;
    try {
      reply = route.handle(body);
    } catch {
      reply = { status: 500 };
    }
    res.writeHead(reply.status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(reply.body === undefined ? '' : `${reply.body}\n`);
  });
}

/** Kubernetes-style text: `[+]name ok` / `[-]name failed: message`, verbose with `?verbose`. */
const render = (
  evaluation: ReturnType<Checks['evaluate']>,
  verbose: boolean,
  what: string,
): string => {
  const lines = evaluation.results
    .filter((r) => verbose || !r.ok)
    .map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.message ?? 'not ready'}`));
  lines.push(evaluation.ok ? `${what} check passed` : `${what} check failed`);
  return `${lines.join('\n')}\n`;
};

/** Serves /healthz, /readyz and /metrics on one port. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const routes = new Map<string, PostRoute>();
  let leader: (() => LeaderStatus) | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const verbose = url.searchParams.has('verbose');
    const route = routes.get(url.pathname);
    if (route !== undefined) {
      if (req.method === 'POST') servePost(req, res, route);
      else res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const probe = (checks: Checks, what: string): void => {
      const evaluation = checks.evaluate();
      res.writeHead(evaluation.ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(render(evaluation, verbose, what));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    switch (url.pathname) {
      case '/healthz':
      case '/livez':
        return probe(options.liveness, 'healthz');
      case '/readyz':
        return probe(options.readiness, 'readyz');
      case '/leader':
        if (leader === undefined) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(leader()));
        return;
      case '/metrics':
        options.registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': options.registry.contentType });
            res.end(text);
          },
          (error: unknown) => {
            options.logger.error('metrics collection failed', { [logFields.error]: error });
            res.writeHead(500).end();
          },
        );
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info('health server listening', {
    [logFields.address]: `${options.host ?? '0.0.0.0'}:${port}`,
  });
  return {
    port,
    route: (path, postRoute) => void routes.set(path, postRoute),
    leader: (status) => {
      leader = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
