import { describe, expect, it } from 'vitest';
import { clusterNetwork, inCidr, parseIpFamilyMode, urlHost } from '../src/network.js';

describe('clusterNetwork', () => {
  it.each([
    [1, 1, false, '10.1.0.0/16', '10.101.0.0/16', ['172.16.1.1'], ['10.1.0.0/20']],
    [
      2,
      2,
      false,
      '10.2.0.0/16',
      '10.102.0.0/16',
      ['172.16.2.1', '172.16.2.2'],
      ['10.2.0.0/20', '10.2.16.0/20'],
    ],
    [3, 1, true, '10.1.0.0/16', '10.103.0.0/16', ['172.16.3.1'], ['10.1.0.0/20']],
  ])(
    'cluster %i with %i node(s), overlap %s',
    (index, nodes, overlap, pods, services, nodeIps, nodePodCidrs) => {
      expect(clusterNetwork(index, nodes, overlap)).toEqual({
        podCidr: pods,
        serviceCidr: services,
        nodeIps,
        nodePodCidrs,
      });
    },
  );

  it('keeps pod ranges distinct by default and the same with overlap', () => {
    const distinct = [1, 2, 3].map((i) => clusterNetwork(i, 1, false).podCidr);
    expect(new Set(distinct).size).toBe(3);
    const overlapping = [1, 2, 3].map((i) => clusterNetwork(i, 1, true).podCidr);
    expect(new Set(overlapping).size).toBe(1);
  });

  it.each([
    [0, 1],
    [100, 1],
    [1, 0],
    [1, 17],
  ])('rejects cluster %i with %i nodes', (index, nodes) => {
    expect(() => clusterNetwork(index, nodes, false)).toThrow(RangeError);
  });

  it('ipv4 (the default) is the plan above, with no ipFamily field in the state', () => {
    expect(clusterNetwork(2, 2, false, 'ipv4')).toEqual(clusterNetwork(2, 2, false));
    expect(clusterNetwork(2, 2, false)).not.toHaveProperty('ipFamily');
  });

  it('ipv6: /108 service range, a /64 per node out of the /56 pod range, IPv6 node IPs', () => {
    expect(clusterNetwork(2, 2, false, 'ipv6')).toEqual({
      podCidr: 'fd00:10:2::/56',
      serviceCidr: 'fd00:10:102::/108',
      nodeIps: ['fd00:172:16:2::1', 'fd00:172:16:2::2'],
      nodePodCidrs: ['fd00:10:2:0::/64', 'fd00:10:2:1::/64'],
      ipFamily: 'ipv6',
    });
    expect(clusterNetwork(3, 1, true, 'ipv6').podCidr).toBe('fd00:10:1::/56');
  });

  it('dual: both ranges, IPv4 first, as the Kubernetes flags take them; IPv4 node IPs', () => {
    expect(clusterNetwork(1, 1, false, 'dual')).toEqual({
      podCidr: '10.1.0.0/16,fd00:10:1::/56',
      serviceCidr: '10.101.0.0/16,fd00:10:101::/108',
      nodeIps: ['172.16.1.1'],
      nodePodCidrs: ['10.1.0.0/20,fd00:10:1:0::/64'],
      ipFamily: 'dual',
    });
  });

  it('parses IP_FAMILY: empty is ipv4, anything else outside ipv4|ipv6|dual is refused', () => {
    expect(parseIpFamilyMode(undefined)).toBe('ipv4');
    expect(parseIpFamilyMode('')).toBe('ipv4');
    expect(parseIpFamilyMode('dual')).toBe('dual');
    expect(() => parseIpFamilyMode('IPv6')).toThrow(/ipv4, ipv6, dual/);
  });
});

describe('urlHost and inCidr', () => {
  it('brackets IPv6 only', () => {
    expect(urlHost('10.1.0.5')).toBe('10.1.0.5');
    expect(urlHost('fd00:10:1::5')).toBe('[fd00:10:1::5]');
  });

  it('tells whether an address is in a range of its family', () => {
    expect(inCidr('10.102.56.139', '10.102.0.0/16')).toBe(true);
    expect(inCidr('10.101.56.139', '10.102.0.0/16')).toBe(false);
    expect(inCidr('fd00:10:102::d:d3ab', 'fd00:10:102::/108')).toBe(true);
    expect(inCidr('fd00:10:101::d:d3ab', 'fd00:10:102::/108')).toBe(false);
    expect(inCidr('fd00:10:102::d:d3ab', '10.102.0.0/16')).toBe(false);
    expect(inCidr('', '10.102.0.0/16')).toBe(false);
  });
});
