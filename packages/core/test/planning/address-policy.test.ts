import { describe, expect, it } from 'vitest';
import {
  canonicalAddress,
  createAddressPolicy,
  embeddedIpv4,
  ipv6Bytes,
  parseCidr,
} from '../../src/planning/index.js';

describe('address policy', () => {
  const open = createAddressPolicy([]);
  it.each([
    ['10.0.0.1', undefined],
    ['192.168.1.20', undefined],
    ['2001:db8::1', undefined],
    ['fd00::5', undefined],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.1.2.3', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'ipv4-mapped'],
    ['::ffff:10.0.0.1', 'ipv4-mapped'],
    ['fe80::1%eth0', 'not-an-ip'],
    ['10.0.0.256', 'not-an-ip'],
    ['example.com', 'not-an-ip'],
    ['', 'not-an-ip'],
    [' 10.0.0.1', 'not-an-ip'],
  ])('%s → %s', (address, expected) => {
    expect(open.refuse(address)).toBe(expected);
  });

  // Issue 11: IPv6 forms that reach a refused IPv4 address through a translator or tunnel.
  it.each([
    ['64:ff9b::a9fe:a9fe', 'metadata'], // NAT64 well-known prefix
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['::a9fe:a9fe', 'metadata'], // IPv4-compatible
    ['::169.254.169.254', 'metadata'],
    ['0:0:0:0:0:0:a9fe:a9fe', 'metadata'],
    ['::ffff:0:a9fe:a9fe', 'metadata'], // SIIT IPv4-translated
    ['::ffff:a9fe:a9fe', 'ipv4-mapped'],
    ['64:ff9b:1::a9fe:a9fe', 'metadata'], // NAT64 local-use, /96 layout
    ['64:ff9b:1:a9fe:a9:fe00::', 'metadata'], // NAT64 local-use, /48 layout (u octet skipped)
    ['64:ff9b:1:a9:fe:a9fe::', 'metadata'], // /56 layout
    ['64:ff9b:1:0:a9:fea9:fe00:0', 'metadata'], // /64 layout
    ['2002:a9fe:a9fe::1', 'metadata'], // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['2001:0:a9fe:a9fe::1', 'metadata'], // Teredo server
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'], // Teredo client, obfuscated
    ['fe80::5efe:a9fe:a9fe', 'link-local'],
    ['2001:db8::5efe:a9fe:a9fe', 'metadata'], // ISATAP interface id
    ['2001:db8::200:5efe:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::e000:1', 'multicast'],
    ['::0.0.0.7', 'unspecified'],
    // Legitimate translated addresses still pass.
    ['64:ff9b::a01:203', undefined],
    ['2002:a01:203::1', undefined],
    ['2001:db8::a9fe:a9fe', undefined], // no embedding at that prefix
  ])('%s → %s (embedded IPv4)', (address, expected) => {
    expect(open.refuse(address)).toBe(expected);
  });

  it('decodes IPv6 text forms into bytes and the embedded IPv4 addresses', () => {
    expect(ipv6Bytes('::ffff:1.2.3.4')).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4,
    ]);
    expect(ipv6Bytes('2001:db8::1').slice(0, 4)).toEqual([0x20, 0x01, 0x0d, 0xb8]);
    expect(embeddedIpv4(ipv6Bytes('2002:a01:203::1'))).toEqual(['10.1.2.3']);
  });

  it('an embedded refused address is refused even inside allowed IPv6 CIDRs', () => {
    const policy = createAddressPolicy(['64:ff9b::/96']);
    expect(policy.refuse('64:ff9b::a01:203')).toBeUndefined();
    expect(policy.refuse('64:ff9b::a9fe:a9fe')).toBe('metadata');
  });

  it('with allowed CIDRs refuses what is outside them but still refuses the always-refused', () => {
    const policy = createAddressPolicy(['10.0.0.0/8', 'fd00:10::/32', '127.0.0.0/8']);
    expect(policy.refuse('10.200.3.4')).toBeUndefined();
    expect(policy.refuse('fd00:10::7')).toBeUndefined();
    expect(policy.refuse('192.168.0.1')).toBe('outside-allowed-cidrs');
    expect(policy.refuse('fd00:11::7')).toBe('outside-allowed-cidrs');
    expect(policy.refuse('127.0.0.1')).toBe('loopback');
  });

  it.each(['10.0.0.0', '10.0.0.0/33', 'fd00::/129', 'x/8', '10.0.0.0/-1'])(
    'rejects CIDR %s',
    (cidr) => {
      expect(() => parseCidr(cidr)).toThrow(/invalid CIDR/);
    },
  );
});

describe('canonicalAddress', () => {
  // What the API server accepts in an EndpointSlice (Go's netip.Addr.String()).
  it.each([
    ['10.1.2.3', '10.1.2.3'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:DB8::0001', '2001:db8::1'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::127.0.0.1', '::7f00:1'],
    ['::1', '::1'],
    ['fd00:0:0:0:0:0:0:0', 'fd00::'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
  ])('%s → %s', (input, canonical) => {
    expect(canonicalAddress(input)).toBe(canonical);
  });
});
