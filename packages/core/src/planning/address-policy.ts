import { BlockList, isIP } from 'node:net';

/**
 * Which endpoint addresses an import agent accepts from Cloud Map. Anyone who can write to the
 * shared Cloud Map namespace could otherwise steer this cluster's traffic to its own node
 * (loopback), to the instance metadata service (169.254.169.254, fd00:ec2::254) or to a
 * broadcast/multicast group, so those are refused whatever the configuration says. IPv6
 * addresses that embed an IPv4 address (IPv4-compatible, SIIT, NAT64, 6to4, Teredo, ISATAP)
 * reach that IPv4 address through a translator or tunnel, so the embedded address is decoded
 * and must pass the IPv4 rules too (`64:ff9b::a9fe:a9fe` is the metadata service behind
 * NAT64; issue 11).
 */
export interface AddressPolicy {
  /** Why `address` is refused, or undefined when it is acceptable. */
  refuse(address: string): AddressRefusal | undefined;
}

export type AddressRefusal =
  | 'not-an-ip'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'ipv4-mapped'
  | 'outside-allowed-cidrs'
  | 'local-service-cidr'
  | 'local-node';

/** Addresses of the importing cluster itself (see local-addresses.ts), refused too. */
export interface LocalAddressCheck {
  refuse(address: string, family: 'ipv4' | 'ipv6'): AddressRefusal | undefined;
}

interface Range {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  reason: AddressRefusal;
}

/** Always refused, in the order they are checked (most specific reason first). */
const ALWAYS_REFUSED: readonly Range[] = [
  { network: '169.254.169.254', prefix: 32, family: 'ipv4', reason: 'metadata' },
  { network: 'fd00:ec2::254', prefix: 128, family: 'ipv6', reason: 'metadata' },
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', reason: 'unspecified' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', reason: 'loopback' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', reason: 'link-local' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', reason: 'multicast' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', reason: 'reserved' },
  { network: '::', prefix: 128, family: 'ipv6', reason: 'unspecified' },
  { network: '::1', prefix: 128, family: 'ipv6', reason: 'loopback' },
  { network: '::ffff:0:0', prefix: 96, family: 'ipv6', reason: 'ipv4-mapped' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', reason: 'link-local' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', reason: 'multicast' },
];

const ALWAYS = ALWAYS_REFUSED.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { list, range };
});

/** The 16 bytes of a valid IPv6 address (as `isIP` accepts it, without a zone id). */
export function ipv6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    tail.push(...dotted.slice(1, 5).map(Number));
    text = `${text.slice(0, dotted.index)}0:0`; // placeholder groups, replaced below
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/**
 * The canonical text of a valid IP address (RFC 5952 for IPv6: lower case, no leading zeros,
 * the longest run of two or more zero groups as `::`, the first on a tie; no dotted tail), the
 * form the API server requires in an EndpointSlice. Cloud Map stores whatever text a writer
 * gave, and one record in another spelling (`::127.0.0.1`, `2001:DB8::0001`) would otherwise
 * make the API server refuse the whole slice (issue 11). IPv4 text that `isIP` accepts is
 * already canonical.
 */
export function canonicalAddress(address: string): string {
  if (!address.includes(':')) return address;
  const bytes = ipv6Bytes(address);
  const words = Array.from(
    { length: 8 },
    (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0),
  );
  let best = { at: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j += 1;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j;
  }
  const hex = (ws: readonly number[]): string => ws.map((w) => w.toString(16)).join(':');
  if (best.length < 2) return hex(words);
  return `${hex(words.slice(0, best.at))}::${hex(words.slice(best.at + best.length))}`;
}

const v4 = (b: readonly number[], at: readonly number[]): string =>
  at.map((i) => String(b[i] ?? 0)).join('.');
const zero = (b: readonly number[], from: number, to: number): boolean =>
  b.slice(from, to).every((x) => x === 0);
const startsWith = (b: readonly number[], prefix: readonly number[]): boolean =>
  prefix.every((x, i) => b[i] === x);

/**
 * Every IPv4 address an IPv6 address may reach through a standard embedding: IPv4-compatible
 * (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64 well-known (64:ff9b::/96) and local-use
 * (64:ff9b:1::/48, every RFC 6052 layout), 6to4
 * (2002::/16), Teredo (2001::/32, server and obfuscated client) and ISATAP interface ids.
 * IPv4-mapped (::ffff:0:0/96) is refused outright before this is consulted.
 */
export function embeddedIpv4(bytes: readonly number[]): string[] {
  const out: string[] = [];
  const last4 = [12, 13, 14, 15];
  if (zero(bytes, 0, 12)) out.push(v4(bytes, last4));
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12))
    out.push(v4(bytes, last4));
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b]) && zero(bytes, 4, 12)) out.push(v4(bytes, last4));
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 1])) {
    // The operator picks the prefix length (/48 to /96) and we cannot know it: every layout
    // is tried, conservatively. A layout that decodes into 0.0.0.0/8 is the zero padding of
    // a longer prefix, not an address, and is skipped so legitimate addresses still pass.
    const layouts = [
      [6, 7, 9, 10], // /48 (the u octet, byte 8, is skipped)
      [7, 9, 10, 11], // /56
      [9, 10, 11, 12], // /64
      last4, // /96
    ];
    for (const at of layouts) if ((bytes[at[0] ?? 0] ?? 0) !== 0) out.push(v4(bytes, at));
  }
  if (startsWith(bytes, [0x20, 0x02])) out.push(v4(bytes, [2, 3, 4, 5]));
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) {
    out.push(v4(bytes, [4, 5, 6, 7]));
    out.push(last4.map((i) => String((bytes[i] ?? 0) ^ 0xff)).join('.'));
  }
  if (
    (bytes[8] === 0 || bytes[8] === 2) &&
    bytes[9] === 0 &&
    bytes[10] === 0x5e &&
    bytes[11] === 0xfe
  )
    out.push(v4(bytes, last4));
  return [...new Set(out)];
}

function refuseAlways(address: string, type: 'ipv4' | 'ipv6'): AddressRefusal | undefined {
  for (const { list, range } of ALWAYS) {
    if (range.family === type && list.check(address, type)) return range.reason;
  }
  return undefined;
}

/** Parses "10.0.0.0/8" or "fd00::/8"; throws on anything else (config errors fail start-up). */
export function parseCidr(cidr: string): { network: string; prefix: number; family: 4 | 6 } {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const network = match?.[1] ?? '';
  const family = isIP(network);
  const prefix = Number(match?.[2]);
  if (family === 0 || !Number.isInteger(prefix) || prefix > (family === 4 ? 32 : 128)) {
    throw new Error(`invalid CIDR ${JSON.stringify(cidr)}`);
  }
  return { network, prefix, family: family as 4 | 6 };
}

/**
 * `allowedCidrs` empty means any address that is not always refused; otherwise the address
 * must fall in one of them.
 */
export function createAddressPolicy(
  allowedCidrs: readonly string[],
  local?: LocalAddressCheck,
): AddressPolicy {
  const allowed = new BlockList();
  for (const cidr of allowedCidrs) {
    const { network, prefix, family } = parseCidr(cidr);
    allowed.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  const restricted = allowedCidrs.length > 0;
  return {
    refuse(address) {
      // isIP accepts zone ids ("fe80::1%eth0"); an endpoint address never has one.
      const family = address.includes('%') ? 0 : isIP(address);
      if (family === 0) return 'not-an-ip';
      const type = family === 4 ? 'ipv4' : 'ipv6';
      const own = refuseAlways(address, type) ?? local?.refuse(address, type);
      if (own !== undefined) return own;
      if (type === 'ipv6') {
        for (const inner of embeddedIpv4(ipv6Bytes(address))) {
          const reason = refuseAlways(inner, 'ipv4') ?? local?.refuse(inner, 'ipv4');
          if (reason !== undefined) return reason;
        }
      }
      if (restricted && !allowed.check(address, type)) return 'outside-allowed-cidrs';
      return undefined;
    },
  };
}
