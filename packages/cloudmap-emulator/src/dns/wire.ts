/**
 * The little of the DNS wire format (RFC 1035, RFC 2782 SRV, RFC 3596 AAAA, RFC 6891 OPT) that
 * an authoritative answer for A/AAAA/SRV/CNAME/SOA needs. Written here rather than taken from a
 * library: a query is one question to read, an answer a handful of fixed-layout records, and
 * every owner name in our answers is the question name or a suffix of it, so name compression
 * is a pointer into the question (no compression table).
 */
import { isIPv4, isIPv6 } from 'node:net';

export const RRType = { A: 1, NS: 2, CNAME: 5, SOA: 6, AAAA: 28, SRV: 33, OPT: 41, ANY: 255 };
export const RCode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };
const CLASS_IN = 1;
const HEADER = 12;

export interface Query {
  id: number;
  opcode: number;
  recursionDesired: boolean;
  /** The question name's labels, exactly as sent (case kept: answers echo it). */
  labels: string[];
  qtype: number;
  qclass: number;
  /** Byte length of the question name on the wire (it starts at offset 12). */
  nameLength: number;
  /** EDNS(0) UDP payload size when the query carried an OPT record. */
  ednsUdpSize: number | undefined;
}

export class WireError extends Error {
  override readonly name = 'WireError';
  constructor(
    message: string,
    /** The query id, when the header could be read: a FORMERR can then be answered. */
    readonly id?: number,
  ) {
    super(message);
  }
}

/** Reads a possibly compressed name at `offset`; returns its labels and where it ends. */
function readName(buf: Buffer, offset: number): { labels: string[]; end: number } {
  const labels: string[] = [];
  let pos = offset;
  let end: number | undefined;
  for (let jumps = 0; jumps < 64; jumps++) {
    if (pos >= buf.length) throw new WireError('name runs past the message');
    const len = buf[pos]!;
    if (len === 0) return { labels, end: end ?? pos + 1 };
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= buf.length) throw new WireError('truncated compression pointer');
      end ??= pos + 2;
      pos = ((len & 0x3f) << 8) | buf[pos + 1]!;
      continue;
    }
    if (len > 63) throw new WireError('label longer than 63 octets');
    if (pos + 1 + len > buf.length) throw new WireError('label runs past the message');
    labels.push(buf.toString('latin1', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  throw new WireError('too many compression pointers');
}

/** Parses a query: exactly one question; an OPT record in the additional section is noted. */
export function parseQuery(buf: Buffer): Query {
  if (buf.length < HEADER) throw new WireError('message shorter than a DNS header');
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  // A response is never answered (no id passed on): two servers must not bounce messages.
  if (flags & 0x8000) throw new WireError('not a query (QR set)');
  const [qd, an, ns, ar] = [4, 6, 8, 10].map((o) => buf.readUInt16BE(o));
  if (qd !== 1) throw new WireError(`expected one question, got ${qd}`, id);
  let name: ReturnType<typeof readName>;
  try {
    name = readName(buf, HEADER);
  } catch (err) {
    throw new WireError((err as Error).message, id);
  }
  if (name.end + 4 > buf.length) throw new WireError('truncated question', id);
  const qtype = buf.readUInt16BE(name.end);
  const qclass = buf.readUInt16BE(name.end + 2);
  let pos = name.end + 4;
  let ednsUdpSize: number | undefined;
  // Answer and authority sections of a query are normally empty; walk past whatever is there.
  for (let i = 0; i < an! + ns! + ar!; i++) {
    const rr = readName(buf, pos);
    if (rr.end + 10 > buf.length) break;
    const type = buf.readUInt16BE(rr.end);
    const rdlength = buf.readUInt16BE(rr.end + 8);
    if (i >= an! + ns! && type === RRType.OPT) ednsUdpSize = buf.readUInt16BE(rr.end + 2);
    pos = rr.end + 10 + rdlength;
  }
  return {
    id,
    opcode: (flags >> 11) & 0xf,
    recursionDesired: (flags & 0x0100) !== 0,
    labels: name.labels,
    qtype,
    qclass,
    nameLength: name.end - HEADER,
    ednsUdpSize,
  };
}

/**
 * Where a record's owner name (or an SRV target's tail) sits: `suffixLabels` labels of the
 * question name, counted from its end, preceded by `prefix` labels of its own.
 */
interface NameRef {
  prefix: string[];
  /** How many trailing labels of the question name follow the prefix (0: the root). */
  suffixLabels: number;
}

export type RData =
  | { type: 'A' | 'AAAA'; address: string }
  | { type: 'CNAME'; target: string }
  | { type: 'SRV'; priority: number; weight: number; port: number; target: NameRef }
  | {
      type: 'SOA';
      mname: string;
      rname: string;
      serial: number;
      refresh: number;
      retry: number;
      expire: number;
      minimum: number;
    };

export interface ResourceRecord {
  owner: NameRef;
  ttl: number;
  data: RData;
}

export interface Answer {
  rcode: number;
  answers: ResourceRecord[];
  authority: ResourceRecord[];
}

const encodeLabels = (labels: readonly string[]): Buffer[] =>
  labels.map((l) => {
    const bytes = Buffer.from(l, 'latin1');
    return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  });

/** A name as prefix labels then a pointer to the question-name suffix (or the root). */
function encodeNameRef(q: Query, ref: NameRef): Buffer {
  const parts = encodeLabels(ref.prefix);
  if (ref.suffixLabels === 0) return Buffer.concat([...parts, Buffer.from([0])]);
  const skip = q.labels.length - ref.suffixLabels;
  let offset = HEADER;
  for (let i = 0; i < skip; i++) offset += 1 + Buffer.byteLength(q.labels[i]!, 'latin1');
  return Buffer.concat([...parts, Buffer.from([0xc0 | (offset >> 8), offset & 0xff])]);
}

/** A plain (uncompressed) absolute name, for SOA and CNAME data outside the question. */
const encodeName = (name: string): Buffer =>
  Buffer.concat([...encodeLabels(name.split('.').filter((l) => l !== '')), Buffer.from([0])]);

function encodeAddress(data: { type: 'A' | 'AAAA'; address: string }): Buffer {
  if (data.type === 'A') {
    if (!isIPv4(data.address)) throw new Error(`not an IPv4 address: ${data.address}`);
    return Buffer.from(data.address.split('.').map(Number));
  }
  if (!isIPv6(data.address)) throw new Error(`not an IPv6 address: ${data.address}`);
  return ipv6Bytes(data.address);
}

/** RFC 4291 text → 16 bytes (`::` expansion, embedded IPv4 tail). */
function ipv6Bytes(address: string): Buffer {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number);
    text =
      text.slice(0, -v4[1]!.length) +
      `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g: string, i: number) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function encodeRData(data: RData, q: Query): { type: number; bytes: Buffer } {
  switch (data.type) {
    case 'A':
      return { type: RRType.A, bytes: encodeAddress(data) };
    case 'AAAA':
      return { type: RRType.AAAA, bytes: encodeAddress(data) };
    case 'CNAME':
      return { type: RRType.CNAME, bytes: encodeName(data.target) };
    case 'SRV': {
      const fixed = Buffer.alloc(6);
      fixed.writeUInt16BE(data.priority, 0);
      fixed.writeUInt16BE(data.weight, 2);
      fixed.writeUInt16BE(data.port, 4);
      return { type: RRType.SRV, bytes: Buffer.concat([fixed, encodeNameRef(q, data.target)]) };
    }
    case 'SOA': {
      const nums = Buffer.alloc(20);
      [data.serial, data.refresh, data.retry, data.expire, data.minimum].forEach((n, i) =>
        nums.writeUInt32BE(n >>> 0, i * 4),
      );
      return {
        type: RRType.SOA,
        bytes: Buffer.concat([encodeName(data.mname), encodeName(data.rname), nums]),
      };
    }
  }
}

function encodeRecord(rr: ResourceRecord, q: Query): Buffer {
  const { type, bytes } = encodeRData(rr.data, q);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(CLASS_IN, 2);
  fixed.writeUInt32BE(Math.min(rr.ttl, 0x7fffffff) >>> 0, 4);
  fixed.writeUInt16BE(bytes.length, 8);
  return Buffer.concat([encodeNameRef(q, rr.owner), fixed, bytes]);
}

function header(
  q: Pick<Query, 'id' | 'opcode' | 'recursionDesired'>,
  rcode: number,
  counts: [number, number, number, number],
  truncated = false,
): Buffer {
  const h = Buffer.alloc(HEADER);
  h.writeUInt16BE(q.id, 0);
  // QR=1, AA=1 (authoritative for its zones), RA=0 (no recursion offered).
  const flags =
    0x8000 |
    (q.opcode << 11) |
    0x0400 |
    (truncated ? 0x0200 : 0) |
    (q.recursionDesired ? 0x0100 : 0) |
    (rcode & 0xf);
  h.writeUInt16BE(flags, 2);
  counts.forEach((c, i) => h.writeUInt16BE(c, 4 + i * 2));
  return h;
}

/** Our OPT record: root owner, our 4096-byte payload size, no options. */
const OPT = Buffer.from([0, 0, RRType.OPT, 0x10, 0x00, 0, 0, 0, 0, 0, 0]);

/**
 * The response to `q`. `maxBytes` is the transport's limit (512 for plain UDP, the EDNS size,
 * 65535 for TCP): an answer that does not fit is sent empty with TC set, so the resolver
 * retries over TCP (RFC 1035 §4.2.1).
 */
export function encodeResponse(q: Query, answer: Answer, raw: Buffer, maxBytes: number): Buffer {
  const question = raw.subarray(HEADER, HEADER + q.nameLength + 4);
  const edns = q.ednsUdpSize !== undefined;
  const answers = answer.answers.map((rr) => encodeRecord(rr, q));
  const authority = answer.authority.map((rr) => encodeRecord(rr, q));
  const full = Buffer.concat([
    header(q, answer.rcode, [1, answers.length, authority.length, edns ? 1 : 0]),
    question,
    ...answers,
    ...authority,
    ...(edns ? [OPT] : []),
  ]);
  if (full.length <= maxBytes) return full;
  return Buffer.concat([
    header(q, answer.rcode, [1, 0, 0, edns ? 1 : 0], true),
    question,
    ...(edns ? [OPT] : []),
  ]);
}

/** A bare error response (FORMERR, NOTIMP, REFUSED) echoing the question when there is one. */
export function errorResponse(q: Query | { id: number }, rcode: number, raw?: Buffer): Buffer {
  if (!('labels' in q) || raw === undefined) {
    return header({ id: q.id, opcode: 0, recursionDesired: false }, rcode, [0, 0, 0, 0]);
  }
  return encodeResponse(q, { rcode, answers: [], authority: [] }, raw, 65535);
}
