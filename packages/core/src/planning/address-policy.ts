import { BlockList, isIP } from 'node:net';

/**
 * Which endpoint addresses an import agent accepts from Cloud Map. Anyone who can write to the
 * shared Cloud Map namespace could otherwise steer this cluster's traffic to its own node
 * (loopback), to the instance metadata service (169.254.169.254, fd00:ec2::254) or to a
 * broadcast/multicast group, so those are refused whatever the configuration says.
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
  | 'outside-allowed-cidrs';

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
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
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
      for (const { list, range } of ALWAYS) {
        if (range.family === type && list.check(address, type)) return range.reason;
      }
      if (restricted && !allowed.check(address, type)) return 'outside-allowed-cidrs';
      return undefined;
    },
  };
}
