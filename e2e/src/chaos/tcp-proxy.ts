/**
 * A TCP proxy on 127.0.0.1 in front of one host:port (a kube-apiserver: TLS passes through
 * untouched, so the client still verifies the API server's own certificate, whose SANs hold
 * 127.0.0.1). Black-holed, it stops carrying bytes in both directions on every connection,
 * open or new, and keeps them open: nothing answered, nothing reset (a stuck proxy or NAT).
 * A connection the black hole took stays dead after the heal (its bytes are gone, as a NAT
 * that lost its entry would have them); only connections opened after the heal carry data.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class HangingTcpProxy {
  #blackHole = false;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #port = 0;
  /** Connections accepted so far. */
  connections = 0;
  /** Bytes the black hole dropped (client to server). */
  swallowedBytes = 0;

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  /** Where clients connect instead of `host:port`. */
  get listenPort(): number {
    return this.#port;
  }

  async start(): Promise<void> {
    const server = createServer((client) => this.#carry(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
  }

  #carry(client: Socket): void {
    this.connections += 1;
    this.#track(client);
    client.on('error', () => {});
    // Held once black-holed: it never carries another byte.
    let held = this.#blackHole;
    const holds = (): boolean => (held ||= this.#blackHole);
    if (held) {
      client.on('data', (d) => (this.swallowedBytes += d.length));
      return;
    }
    const upstream = connect(this.port, this.host);
    this.#track(upstream);
    upstream.on('error', () => {});
    client.on('data', (d) => {
      if (holds()) this.swallowedBytes += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!holds()) client.write(d);
    });
    // The server's end or reset reaches the client only while carrying: a held connection
    // stays open. The client going away (the agent exited) frees its upstream either way.
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (!holds()) client.destroy();
    });
  }

  #track(s: Socket): void {
    this.#sockets.add(s);
    s.on('close', () => this.#sockets.delete(s));
  }

  blackHole(on: boolean): void {
    this.#blackHole = on;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.#server = undefined;
  }
}
