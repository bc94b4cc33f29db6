/**
 * A Cloud Map endpoint that can be cut for one agent only: an HTTP proxy on 127.0.0.1 in
 * front of the emulator. Cut, it answers every call 503 ServiceUnavailable (what an AWS
 * regional outage or a broken NAT/VPC endpoint looks like to the SDK), so an outage can hit
 * the importing side while the exporting side still works, or the other way round. The
 * emulator's own admin outage hits every client at once.
 *
 * Black-holed, it answers nothing at all: each request is read and its connection held open,
 * never answered nor reset (a stuck proxy or NAT). Healing does not revive those: a request
 * the black hole took stays unanswered until the client gives up on it, so only clients that
 * drop a silent connection and open a new one see the heal.
 */
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export class CuttableProxy {
  #cut = false;
  #blackHole = false;
  readonly #held: ServerResponse[] = [];
  #server: Server | undefined;
  #url = '';
  /** Calls answered 503 because the proxy was cut. */
  refused = 0;
  /** Calls the black hole took (never answered). */
  swallowed = 0;
  /** Connections accepted so far. */
  connections = 0;
  /** Calls passed on to the emulator: when, and the operation (X-Amz-Target's last part). */
  readonly calls: { readonly at: number; readonly operation: string }[] = [];

  constructor(readonly target: string) {}

  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    const target = new URL(this.target);
    const server = createServer((req, res) => {
      if (this.#blackHole) {
        this.swallowed += 1;
        req.resume();
        this.#held.push(res);
        return;
      }
      if (this.#cut) {
        this.refused += 1;
        req.resume();
        res.writeHead(503, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(
          JSON.stringify({ __type: 'ServiceUnavailableException', message: 'cut by chaos proxy' }),
        );
        return;
      }
      const op = String(req.headers['x-amz-target'] ?? '');
      this.calls.push({ at: Date.now(), operation: op.slice(op.lastIndexOf('.') + 1) });
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
    server.keepAliveTimeout = 1_000;
    server.on('connection', () => (this.connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  }

  /** Write calls passed on (anything but Get*, List*, Discover*) at or after `since` (ms). */
  writes(since = 0): { readonly at: number; readonly operation: string }[] {
    return this.calls.filter((c) => c.at >= since && !/^(Get|List|Discover)/.test(c.operation));
  }

  cut(on: boolean): void {
    this.#cut = on;
  }

  blackHole(on: boolean): void {
    this.#blackHole = on;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.#server = undefined;
  }
}
