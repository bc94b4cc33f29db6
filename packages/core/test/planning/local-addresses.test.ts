import { describe, expect, it } from 'vitest';
import { createAddressPolicy, createLocalAddresses } from '../../src/planning/index.js';

describe('local addresses', () => {
  it('refuses the Service CIDRs and node addresses, even inside allowed CIDRs', () => {
    const local = createLocalAddresses();
    local.setServiceCidrs(['10.96.0.0/12', 'fd00:96::/112']);
    local.setNodeAddresses(['10.0.0.5', '2001:db8::5', 'not-an-ip']);
    const policy = createAddressPolicy(['10.0.0.0/8', '2001:db8::/32', 'fd00::/8'], local);
    expect(policy.refuse('10.96.0.1')).toBe('local-service-cidr'); // the API server
    expect(policy.refuse('10.111.2.3')).toBe('local-service-cidr');
    expect(policy.refuse('fd00:96::a')).toBe('local-service-cidr');
    expect(policy.refuse('10.0.0.5')).toBe('local-node');
    expect(policy.refuse('2001:db8:0:0::5')).toBe('local-node');
    expect(policy.refuse('10.0.0.6')).toBeUndefined();
    expect(policy.refuse('10.244.1.7')).toBeUndefined();
    // An IPv6 form embedding a local IPv4 address is refused as well.
    expect(policy.refuse('64:ff9b::a60:1')).toBe('local-service-cidr');
    expect(local.snapshot()).toEqual({
      serviceCidrs: ['10.96.0.0/12', 'fd00:96::/112'],
      nodeAddresses: ['10.0.0.5', '2001:db8::5'],
    });
  });

  it('is replaced wholesale on each refresh', () => {
    const local = createLocalAddresses();
    const policy = createAddressPolicy([], local);
    local.setNodeAddresses(['10.0.0.5']);
    expect(policy.refuse('10.0.0.5')).toBe('local-node');
    local.setNodeAddresses(['10.0.0.6']);
    expect(policy.refuse('10.0.0.5')).toBeUndefined();
    expect(policy.refuse('10.0.0.6')).toBe('local-node');
  });
});
