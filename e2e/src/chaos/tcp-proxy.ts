/**
 * A TCP proxy on 127.0.0.1 in front of one host:port (a kube-apiserver: TLS passes through
 * untouched, so the client still verifies the API server's own certificate, whose SANs hold
 * 127.0.0.1). Slowed, it carries every byte late. Black-holed, it stops carrying bytes in both
 * directions on every connection, open or new, and keeps them open: nothing answered, nothing
 * reset (a stuck proxy or NAT). A connection the black hole took stays dead after the heal (its
 * bytes are gone, as a NAT that lost its entry would have them); only connections opened after
 * the heal carry data.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class HangingTcpProxy {
  #blackHole = false;
  #delayMs = 0;
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
    const toServer = this.#delayed(upstream, holds);
    const toClient = this.#delayed(client, holds);
    client.on('data', (d) => {
      if (holds()) this.swallowedBytes += d.length;
      else toServer(d);
    });
    upstream.on('data', (d) => toClient(d));
    // The server's end or reset reaches the client only while carrying (after the bytes before
    // it): a held connection stays open. The client going away (the agent exited) frees its
    // upstream either way.
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => toClient(null));
  }

  /**
   * Writes to `to` what it is given, each chunk `delayMs` after it came and in order; `null`
   * closes `to` after the chunks before it. Nothing once the connection is held.
   */
  #delayed(to: Socket, holds: () => boolean): (chunk: Buffer | null) => void {
    const queue: { at: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = (): void => {
      timer = undefined;
      for (let next = queue[0]; next !== undefined && next.at <= Date.now(); next = queue[0]) {
        queue.shift();
        if (holds()) continue;
        if (next.chunk === null) to.destroy();
        else to.write(next.chunk);
      }
      const next = queue[0];
      if (next !== undefined) timer = setTimeout(flush, next.at - Date.now());
    };
    return (chunk) => {
      queue.push({ at: Date.now() + this.#delayMs, chunk });
      if (timer === undefined) flush();
    };
  }

  #track(s: Socket): void {
    this.#sockets.add(s);
    s.on('close', () => this.#sockets.delete(s));
  }

  blackHole(on: boolean): void {
    this.#blackHole = on;
  }

  /** Slow, not hung: every byte, both ways, on every carrying connection, `ms` late (0: none). */
  delay(ms: number): void {
    this.#delayMs = ms;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.#server = undefined;
  }
}
