import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type RunningDnsServer } from '../src/dns/server.js';
import { encodeResponse, parseQuery, RCode, RRType } from '../src/dns/wire.js';
import { engineAt } from './engine-at.js';

/** A query for `name`/`qtype` with the given header flags and question count. */
function query(name: string, qtype: number, opts: { flags?: number; qd?: number } = {}): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xbeef, 0);
  head.writeUInt16BE(opts.flags ?? 0x0100, 2);
  head.writeUInt16BE(opts.qd ?? 1, 4);
  const labels = name
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  return Buffer.concat([head, ...labels, Buffer.from([0, 0, qtype, 0, 1])]);
}

/**
 * One message to the DNS server over TCP (length-prefixed): the answer, or 'closed' when the
 * server hangs up without one (what it does when a message gets no answer).
 */
function exchange(port: number, message: Buffer): Promise<Buffer | 'closed'> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let buf = Buffer.alloc(0);
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      connected = true;
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(message.length);
      socket.write(Buffer.concat([prefix, message]));
    });
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        socket.destroy();
      }
    });
    socket.on('error', () => undefined); // a reset after the server's destroy: 'close' follows
    socket.on('close', () =>
      connected ? resolve('closed') : reject(new Error('no connection to the DNS server')),
    );
  });
}

const rcodeOf = (b: Buffer | 'closed'): number | 'closed' =>
  b === 'closed' ? b : b.readUInt16BE(2) & 0xf;

describe('DNS wire handling', () => {
  const { engine } = engineAt();
  let dns: RunningDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer(engine, { port: 0, host: '127.0.0.1' });
  });
  afterAll(() => dns.stop());
  const ask = (message: Buffer) => exchange(dns.info.port, message);

  it('parses the question and keeps its case', () => {
    const q = parseQuery(query('Web.Corp.internal', 1));
    expect(q).toMatchObject({ id: 0xbeef, labels: ['Web', 'Corp', 'internal'], qtype: 1 });
    expect(q.recursionDesired).toBe(true);
  });

  it('FORMERR for two questions, NOTIMP for other opcodes, nothing for a runt message', async () => {
    expect(rcodeOf(await ask(query('a.b', 1, { qd: 2 })))).toBe(RCode.FORMERR);
    expect(rcodeOf(await ask(query('a.b', 1, { flags: 0x2000 })))).toBe(RCode.NOTIMP);
    expect(await ask(Buffer.from([1, 2, 3]))).toBe('closed');
    // A name that points at itself must not loop.
    const loop = Buffer.concat([
      query('a', 1).subarray(0, 12),
      Buffer.from([0xc0, 12, 0, 1, 0, 1]),
    ]);
    expect(rcodeOf(await ask(loop))).toBe(RCode.FORMERR);
  });

  it('answers a response (QR set) with nothing and REFUSED outside its zones', async () => {
    expect(await ask(query('a.b', 1, { flags: 0x8000 }))).toBe('closed');
    expect(rcodeOf(await ask(query('a.b', 1)))).toBe(RCode.REFUSED);
  });

  it('writes IPv6 addresses in their 16 bytes', () => {
    const addresses = ['fd00::1:2', '::ffff:10.0.0.1', '2001:db8:0:0:0:0:0:1'];
    const raw = query('web.corp.internal', RRType.AAAA);
    const q = parseQuery(raw);
    const out = encodeResponse(
      q,
      {
        rcode: RCode.NOERROR,
        answers: addresses.map((address) => ({
          owner: { prefix: [], suffixLabels: 3 },
          ttl: 30,
          data: { type: 'AAAA' as const, address },
        })),
        authority: [],
      },
      raw,
      512,
    );
    expect(out.readUInt16BE(6)).toBe(3); // ANCOUNT
    // Each answer: a 2-byte pointer to the question name, type, class, TTL, RDLENGTH, RDATA.
    const rdata: string[] = [];
    for (let pos = 12 + q.nameLength + 4; pos < out.length;) {
      expect(out.readUInt16BE(pos + 2)).toBe(RRType.AAAA);
      const length = out.readUInt16BE(pos + 10);
      rdata.push(out.toString('hex', pos + 12, pos + 12 + length));
      pos += 12 + length;
    }
    expect(rdata).toEqual([
      'fd000000000000000000000000010002',
      '00000000000000000000ffff0a000001',
      '20010db8000000000000000000000001',
    ]);
  });
});
