import { describe, expect, it } from 'vitest';
import { createAddressPolicy, parseCidr } from '../../src/planning/index.js';

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
