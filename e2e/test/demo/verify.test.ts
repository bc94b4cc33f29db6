import { describe, expect, it } from 'vitest';
import { missing, type ClusterObservation } from '../../src/demo/verify.js';

const converged = (cluster: string): ClusterObservation => ({
  cluster,
  exportedEndpoints: 2,
  exportedFamilies: ['IPv4'],
  exportConditions: { Valid: 'True', Ready: 'True', Conflict: 'False' },
  serviceImport: { type: 'ClusterSetIP', ips: ['10.101.0.9'], clusters: ['c1', 'c2'] },
  importedEndpoints: { c1: { IPv4: 2 }, c2: { IPv4: 2 } },
  derivedServiceIp: '10.101.0.9',
});

const with_ = (cluster: string, patch: Partial<ClusterObservation>): ClusterObservation => ({
  ...converged(cluster),
  ...patch,
});

describe('missing', () => {
  it('is empty once both clusters import the service with endpoints from both', () => {
    expect(missing([converged('c1'), converged('c2')], 'hello')).toEqual([]);
  });

  it('is empty on dual stack once every pod is imported in both families', () => {
    // A pod is one address in each family's slice: 2 pods, 2 addresses per family.
    const dual = (cluster: string) =>
      with_(cluster, {
        exportedFamilies: ['IPv4', 'IPv6'],
        importedEndpoints: { c1: { IPv4: 2, IPv6: 2 }, c2: { IPv4: 2, IPv6: 2 } },
      });
    expect(missing([dual('c1'), dual('c2')], 'hello')).toEqual([]);
  });

  it.each<[string, ClusterObservation[], string[]]>([
    [
      'pods not ready yet',
      [with_('c1', { exportedEndpoints: 0 }), converged('c2')],
      ['c1: the hello pods are not ready yet'],
    ],
    [
      'export not Ready',
      [with_('c1', { exportConditions: { Valid: 'True' } }), converged('c2')],
      ['c1: ServiceExport hello is not Ready yet (no condition)'],
    ],
    [
      'no ServiceImport yet',
      [converged('c1'), with_('c2', { serviceImport: undefined, importedEndpoints: {} })],
      ['c2: no ServiceImport hello yet'],
    ],
    [
      'no clusterset IP',
      [
        converged('c1'),
        with_('c2', { serviceImport: { type: 'ClusterSetIP', ips: [], clusters: ['c1', 'c2'] } }),
      ],
      ['c2: ServiceImport hello has no clusterset IP yet'],
    ],
    [
      'one exporting cluster not merged yet',
      [
        with_('c1', {
          serviceImport: { type: 'ClusterSetIP', ips: ['10.101.0.9'], clusters: ['c1'] },
          importedEndpoints: { c1: { IPv4: 2 } },
        }),
        converged('c2'),
      ],
      ['c1: ServiceImport hello does not list c2 yet', 'c1: 0/2 endpoints imported from c2'],
    ],
    [
      'endpoints behind the pods',
      [converged('c1'), with_('c2', { importedEndpoints: { c1: { IPv4: 1 }, c2: { IPv4: 2 } } })],
      ['c2: 1/2 endpoints imported from c1'],
    ],
    [
      'dual stack: one family not imported yet',
      [
        with_('c1', {
          exportedFamilies: ['IPv4', 'IPv6'],
          importedEndpoints: { c1: { IPv4: 2, IPv6: 2 }, c2: { IPv4: 2 } },
        }),
        with_('c2', {
          exportedFamilies: ['IPv4', 'IPv6'],
          importedEndpoints: { c1: { IPv4: 2, IPv6: 2 }, c2: { IPv4: 2, IPv6: 1 } },
        }),
      ],
      ['c1: 0/2 IPv6 endpoints imported from c2', 'c2: 1/2 IPv6 endpoints imported from c2'],
    ],
  ])('%s', (_name, observations, expected) => {
    expect(missing(observations, 'hello')).toEqual(expected);
  });
});
