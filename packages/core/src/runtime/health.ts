import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';

export interface CheckResult {
  ok: boolean;
  /** Why not ok, in words an operator can act on (e.g. the ClusterProperty YAML to apply). */
  message?: string;
}

/** Named checks; a state can be set (`set`) or computed on each probe (`add`). */
export interface Checks {
  set(name: string, ok: boolean, message?: string): void;
  add(name: string, check: () => CheckResult): void;
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
  /** Unset: every address of both families (see the listen call). */
  host?: string | undefined;
  /** Served on /metrics in the Prometheus text format (a Registry, or what serves several). */
  registry: Pick<Registry, 'contentType' | 'metrics'>;
  /** /healthz: the process works (e.g. not deadlocked); failing restarts the Pod. */
  liveness: Checks;
  /** /readyz: the agent does its job (identity valid, caches synced, leading or standby). */
  readiness: Checks;
  logger: Logger;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
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
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const verbose = url.searchParams.has('verbose');
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
  // No host: Node listens on :: (IPv6 and IPv4) when the node has IPv6, else on 0.0.0.0, so
  // kubelet probes and scrapes reach the pod over any family it has.
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port, address } = server.address() as AddressInfo;
  options.logger.info('health server listening', {
    [logFields.address]: address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`,
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
