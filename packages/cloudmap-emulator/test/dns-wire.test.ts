import { describe, expect, it } from 'vitest';
import { respond } from '../src/dns/server.js';
import { ipv6Bytes, parseQuery, RCode } from '../src/dns/wire.js';
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

const rcodeOf = (b: Buffer | undefined): number => b!.readUInt16BE(2) & 0xf;

describe('DNS wire handling', () => {
  const { engine } = engineAt();

  it('parses the question and keeps its case', () => {
    const q = parseQuery(query('Web.Corp.internal', 1));
    expect(q).toMatchObject({ id: 0xbeef, labels: ['Web', 'Corp', 'internal'], qtype: 1 });
    expect(q.recursionDesired).toBe(true);
  });

  it('FORMERR for two questions, NOTIMP for other opcodes, nothing for a runt message', () => {
    expect(rcodeOf(respond(engine, query('a.b', 1, { qd: 2 }), 512))).toBe(RCode.FORMERR);
    expect(rcodeOf(respond(engine, query('a.b', 1, { flags: 0x2000 }), 512))).toBe(RCode.NOTIMP);
    expect(respond(engine, Buffer.from([1, 2, 3]), 512)).toBeUndefined();
    // A name that points at itself must not loop.
    const loop = Buffer.concat([
      query('a', 1).subarray(0, 12),
      Buffer.from([0xc0, 12, 0, 1, 0, 1]),
    ]);
    expect(rcodeOf(respond(engine, loop, 512))).toBe(RCode.FORMERR);
  });

  it('answers a response (QR set) with nothing and REFUSED outside its zones', () => {
    expect(respond(engine, query('a.b', 1, { flags: 0x8000 }), 512)).toBeUndefined();
    expect(rcodeOf(respond(engine, query('a.b', 1), 512))).toBe(RCode.REFUSED);
  });

  it('writes IPv6 addresses in their 16 bytes', () => {
    expect(ipv6Bytes('fd00::1:2').toString('hex')).toBe('fd000000000000000000000000010002');
    expect(ipv6Bytes('::ffff:10.0.0.1').toString('hex')).toBe('00000000000000000000ffff0a000001');
    expect(ipv6Bytes('2001:db8:0:0:0:0:0:1').toString('hex')).toBe(
      '20010db8000000000000000000000001',
    );
  });
});
