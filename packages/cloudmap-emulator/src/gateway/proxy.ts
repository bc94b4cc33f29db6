import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { LocalCa } from './ca.js';

/**
 * Only Cloud Map's own endpoints are intercepted: the regional and FIPS hosts, their `data-`
 * hosts, and VPC interface endpoint names (`vpce-<id>.servicediscovery.<region>.vpce...` and
 * `vpce-<id>.data-servicediscovery...`). Every other CONNECT is refused, so nothing a client
 * sends through the gateway ever leaves the machine.
 */
export const INTERCEPTED_HOST =
  /^((data-)?servicediscovery(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?|vpce-[a-z0-9-]+\.(data-)?servicediscovery(-fips)?\.[a-z0-9-]+\.vpce\.amazonaws\.com)$/;

/** A host that serves DiscoverInstances* (AWS serves them there and nowhere else). */
export const isDataHost = (host: string): boolean => /(^|\.)data-servicediscovery/.test(host);

/** The intercepted host of each decrypted connection the gateway handed to the server. */
const hostOfSocket = new WeakMap<object, string>();

/** The AWS host name a connection came through the gateway for; undefined for direct ones. */
export const gatewayHostOf = (socket: object): string | undefined => hostOfSocket.get(socket);

export interface RunningGateway {
  /** `http://127.0.0.1:<port>`: the value for HTTPS_PROXY. */
  url: string;
  port: number;
  stop: () => Promise<void>;
}

/**
 * An HTTPS CONNECT proxy that terminates TLS with certificates from `ca` and hands the
 * decrypted connection to the emulator's own HTTP server, which then serves it like any
 * other connection: same state, same faults, same counts.
 */
export async function startGateway(options: {
  ca: LocalCa;
  target: Server;
  port?: number;
  host?: string;
}): Promise<RunningGateway> {
  const contexts = new Map<string, SecureContext>();
  const sockets = new Set<Socket>();
  const proxy = createServer((_req, res) => {
    // Plain-HTTP proxying would forward to the real host; only CONNECT is served.
    res
      .writeHead(405, { 'content-type': 'text/plain' })
      .end('cloudmap-emulator gateway: CONNECT only\n');
  });
  proxy.on('connect', (req, clientSocket: Socket, head: Buffer) => {
    sockets.add(clientSocket);
    clientSocket.once('close', () => sockets.delete(clientSocket));
    clientSocket.on('error', () => clientSocket.destroy());
    const [host, port] = (req.url ?? '').split(':');
    if (!host || !INTERCEPTED_HOST.test(host) || (port ?? '443') !== '443') {
      clientSocket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    let context = contexts.get(host);
    if (!context) {
      const { keyPem, certPem } = options.ca.leafFor(host);
      context = createSecureContext({ key: keyPem, cert: certPem });
      contexts.set(host, context);
    }
    clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) clientSocket.unshift(head);
    const tlsSocket = new TLSSocket(clientSocket, {
      isServer: true,
      secureContext: context,
      ALPNProtocols: ['http/1.1'],
    });
    tlsSocket.on('error', () => tlsSocket.destroy());
    hostOfSocket.set(tlsSocket, host);
    options.target.emit('connection', tlsSocket);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      proxy.off('error', reject);
      resolve();
    });
  });
  const port = (proxy.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
