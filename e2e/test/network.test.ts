import { describe, expect, it } from 'vitest';
import { clusterNetwork } from '../src/network.js';

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
});
