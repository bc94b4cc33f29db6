import { describe, expect, it } from 'vitest';
import {
  createAddressPolicy,
  createLocalAddresses,
  trustExport,
  type TrustPolicy,
} from '../../src/planning/index.js';
import { clusterExport, endpoint } from './fixtures.js';

// Issue 33: the import path of IPv6-only and dual-stack clusters. Cloud Map keeps whatever
// text a writer gave, so every hostile IPv6 form is checked in the spellings RFC 5952 does not
// allow too (upper case, leading zeros, no `::`, `::` for a single zero group, a dotted tail).
describe('address policy on IPv6 import paths', () => {
  const open = createAddressPolicy([]);

  it.each([
    // EC2 instance metadata over IPv6
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2::254', 'metadata'],
    ['fd00:0ec2:0000:0000:0000:0000:0000:0254', 'metadata'],
    ['fd00:ec2:0:0:0:0:0:254', 'metadata'],
    ['fd00:ec2::0.0.2.84', 'metadata'], // dotted tail of the same 16 bytes
    // loopback, unspecified, link-local (the whole /10), multicast
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback'],
    ['::0001', 'loopback'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::0', 'unspecified'],
    ['FE80::1', 'link-local'],
    ['fe80:0:0:0:0:0:0:1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['FF02::1', 'multicast'],
    // IPv4-mapped, in every spelling
    ['::FFFF:127.0.0.1', 'ipv4-mapped'],
    ['0:0:0:0:0:ffff:7f00:1', 'ipv4-mapped'],
    ['::ffff:A9FE:A9FE', 'ipv4-mapped'],
    ['0000:0000:0000:0000:0000:FFFF:0A00:0001', 'ipv4-mapped'],
    // IPv4-compatible
    ['::7F00:1', 'loopback'],
    ['0:0:0:0:0:0:127.0.0.1', 'loopback'],
    ['::A9FE:A9FE', 'metadata'],
    // NAT64 well-known prefix
    ['64:FF9B::A9FE:A9FE', 'metadata'],
    ['0064:ff9b:0000:0000:0000:0000:a9fe:a9fe', 'metadata'],
    ['64:ff9b:0:0:0:0:127.0.0.1', 'loopback'],
    ['64:ff9b::0.0.0.1', 'unspecified'],
    // 6to4
    ['2002:A9FE:A9FE::', 'metadata'],
    ['2002:a9fe:a9fe:0:0:0:0:1', 'metadata'],
    ['2002:7f00:0001::', 'loopback'],
    // Teredo: server field and obfuscated client field
    ['2001:0000:A9FE:A9FE::1', 'metadata'],
    ['2001::a9fe:a9fe:0:0:0:1', 'metadata'],
    ['2001:0:4136:E378:8000:63BF:5601:5601', 'metadata'],
  ])('%s → %s', (address, reason) => {
    expect(open.refuse(address)).toBe(reason);
  });

  it.each([
    '2001:db8::1',
    '2001:DB8:0:0:0:0:0:1',
    'fd00:10:244:1::5',
    'FD00:10:244:1:0:0:0:5',
    '64:ff9b::a01:203', // NAT64 to 10.1.2.3
    '2002:0a01:0203::1', // 6to4 of 10.1.2.3
    'fec0::1', // just past fe80::/10
  ])('%s passes', (address) => {
    expect(open.refuse(address)).toBeUndefined();
  });

  it('applies each family its own allow-list; a family with none listed is refused', () => {
    const dual = createAddressPolicy(['10.244.0.0/16', 'fd00:10:244::/56']);
    expect(dual.refuse('10.244.1.5')).toBeUndefined();
    expect(dual.refuse('FD00:10:244:1::5')).toBeUndefined();
    expect(dual.refuse('fd00:10:245::5')).toBe('outside-allowed-cidrs');
    expect(dual.refuse('10.245.1.5')).toBe('outside-allowed-cidrs');
    // An allow-list naming only IPv4 ranges does not open IPv6: every IPv6 address is outside.
    const v4Only = createAddressPolicy(['10.244.0.0/16']);
    expect(v4Only.refuse('fd00:10:244:1::5')).toBe('outside-allowed-cidrs');
    expect(v4Only.refuse('2001:db8::1')).toBe('outside-allowed-cidrs');
    // An allowed IPv6 range never lets an always-refused form in, however it is written.
    const wide = createAddressPolicy(['::/0']);
    expect(wide.refuse('FD00:EC2:0:0:0:0:0:254')).toBe('metadata');
    expect(wide.refuse('64:ff9b::169.254.169.254')).toBe('metadata');
    expect(wide.refuse('0:0:0:0:0:0:0:1')).toBe('loopback');
  });

  it("refuses the importing cluster's own IPv6 Service range and node addresses", () => {
    const local = createLocalAddresses();
    local.setServiceCidrs(['10.96.0.0/16', 'fd00:10:96::/112']);
    local.setNodeAddresses(['10.0.0.11', 'fd00:0:0:1:0:0:0:11']);
    const policy = createAddressPolicy([], local);
    expect(policy.refuse('fd00:10:96::a')).toBe('local-service-cidr');
    expect(policy.refuse('FD00:10:96:0:0:0:0:A')).toBe('local-service-cidr');
    expect(policy.refuse('fd00:0:0:1::11')).toBe('local-node');
    // The local IPv4 ranges reached through an IPv6 embedding are this cluster's too.
    expect(policy.refuse('64:ff9b::10.96.0.1')).toBe('local-service-cidr');
    expect(policy.refuse('2002:a00:b::1')).toBe('local-node');
    expect(policy.refuse('fd00:10:97::a')).toBeUndefined();
  });

  it('refuses every hostile form of a dual-stack export one by one, keeps and canonicalises the rest', () => {
    const policy: TrustPolicy = { clustersetId: 'set-1', addresses: createAddressPolicy([]) };
    const v6 = (address: string) => endpoint(address, { addressType: 'IPv6' });
    const out = trustExport(
      policy,
      clusterExport('c1', {}, [
        endpoint('10.244.1.5'),
        v6('FD00:10:244:1:0:0:0:5'),
        v6('FD00:EC2::254'),
        v6('0:0:0:0:0:0:0:1'),
        v6('fe80::1'),
        v6('::'),
        v6('::ffff:10.0.0.1'),
        v6('::169.254.169.254'),
        v6('64:ff9b::a9fe:a9fe'),
        v6('2002:a9fe:a9fe::1'),
        v6('2001:0:a9fe:a9fe::1'),
        v6('ff02::1'),
      ]),
    );
    expect(out.value?.endpoints.map((e) => e.address)).toEqual(['10.244.1.5', 'fd00:10:244:1::5']);
    expect(out.refusals.map((r) => [r.reason, r.subject, r.detail])).toEqual([
      ['refused-address', 'FD00:EC2::254', 'metadata'],
      ['refused-address', '0:0:0:0:0:0:0:1', 'loopback'],
      ['refused-address', 'fe80::1', 'link-local'],
      ['refused-address', '::', 'unspecified'],
      ['refused-address', '::ffff:10.0.0.1', 'ipv4-mapped'],
      ['refused-address', '::169.254.169.254', 'metadata'],
      ['refused-address', '64:ff9b::a9fe:a9fe', 'metadata'],
      ['refused-address', '2002:a9fe:a9fe::1', 'metadata'],
      ['refused-address', '2001:0:a9fe:a9fe::1', 'metadata'],
      ['refused-address', 'ff02::1', 'multicast'],
    ]);
  });
});
