/**
 * The emulator's DNS server: UDP and TCP on one loopback port, answering for the emulator's
 * DNS namespaces as Route 53 would for their hosted zones (records.ts). Every query reads the
 * current state after advancing the operation clock, so an instance answers once its
 * RegisterInstance operation has succeeded, as on AWS.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import type { Engine } from '../engine.js';
import { answerQuestion } from './records.js';
import { RCode, WireError, encodeResponse, errorResponse, parseQuery, type Query } from './wire.js';

export interface DnsServerInfo {
  host: string;
  port: number;
  /** `host:port`, e.g. for `dig -p` or node:dns `Resolver.setServers`. */
  address: string;
}

export interface RunningDnsServer {
  info: DnsServerInfo;
  /** Queries answered since start, by transport. */
  counts: { udp: number; tcp: number };
  stop(): Promise<void>;
}

const CLASS_IN = 1;
const CLASS_ANY = 255;

/** The response bytes for one query message; never throws. */
function respond(engine: Engine, raw: Buffer, maxBytes: number): Buffer | undefined {
  let q: Query;
  try {
    q = parseQuery(raw);
  } catch (err) {
    // Without a readable header there is nobody to answer (RFC 1035 §4.1.1: FORMERR needs an id).
    return err instanceof WireError && err.id !== undefined
      ? errorResponse({ id: err.id }, RCode.FORMERR)
      : undefined;
  }
  if (q.opcode !== 0) return errorResponse(q, RCode.NOTIMP, raw);
  if (q.qclass !== CLASS_IN && q.qclass !== CLASS_ANY) return errorResponse(q, RCode.REFUSED, raw);
  try {
    engine.advance();
    const answer = answerQuestion(engine.state, q.labels, q.qtype);
    return encodeResponse(q, answer, raw, maxBytes);
  } catch (err) {
    console.error('cloudmap-emulator: DNS query failed', err);
    return errorResponse(q, RCode.SERVFAIL, raw);
  }
}

/** UDP payload limit: 512 without EDNS (RFC 1035), else the client's size up to 4096. */
const udpLimit = (raw: Buffer): number => {
  try {
    const size = parseQuery(raw).ednsUdpSize;
    return size === undefined ? 512 : Math.max(512, Math.min(size, 4096));
  } catch {
    return 512;
  }
};

function serveTcp(engine: Engine, socket: TcpSocket, counts: { tcp: number }): void {
  let buffered = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.setTimeout(10_000, () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    // RFC 1035 §4.2.2: each message is preceded by its two-byte length.
    while (buffered.length >= 2) {
      const len = buffered.readUInt16BE(0);
      if (buffered.length < 2 + len) return;
      const message = buffered.subarray(2, 2 + len);
      buffered = buffered.subarray(2 + len);
      const out = respond(engine, Buffer.from(message), 65535);
      counts.tcp += 1;
      if (out === undefined) {
        socket.destroy();
        return;
      }
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(out.length);
      socket.write(Buffer.concat([prefix, out]));
    }
  });
}

const listenUdp = (port: number, host: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const udp = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    udp.once('error', reject);
    udp.bind(port, host, () => {
      udp.off('error', reject);
      resolve(udp);
    });
  });

const listenTcp = (port: number, host: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const tcp = createServer();
    tcp.once('error', reject);
    tcp.listen(port, host, () => {
      tcp.off('error', reject);
      resolve(tcp);
    });
  });

/**
 * Binds UDP and TCP to the same port. With port 0 the UDP socket picks a free port and TCP
 * takes the same number; if TCP finds it taken, both are tried again on another port.
 */
async function bindBoth(port: number, host: string): Promise<{ udp: Socket; tcp: Server }> {
  for (let attempt = 0; ; attempt++) {
    const udp = await listenUdp(port, host);
    try {
      const tcp = await listenTcp(udp.address().port, host);
      return { udp, tcp };
    } catch (err) {
      udp.close();
      const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (port !== 0 || !inUse || attempt >= 20) throw err;
    }
  }
}

export async function startDnsServer(
  engine: Engine,
  opts: { port: number; host: string },
): Promise<RunningDnsServer> {
  const { udp, tcp } = await bindBoth(opts.port, opts.host);
  const counts = { udp: 0, tcp: 0 };
  udp.on('message', (msg, rinfo) => {
    const out = respond(engine, msg, udpLimit(msg));
    counts.udp += 1;
    if (out !== undefined) udp.send(out, rinfo.port, rinfo.address);
  });
  udp.on('error', (err) => console.error('cloudmap-emulator: DNS UDP socket error', err));
  const open = new Set<TcpSocket>();
  tcp.on('connection', (socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    serveTcp(engine, socket, counts);
  });
  const port = udp.address().port;
  const hostText = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    info: { host: opts.host, port, address: `${hostText}:${port}` },
    counts,
    stop: async () => {
      for (const s of open) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
