import { describe, expect, it } from 'vitest';
import type { ClusterExport } from '../../src/index.js';
import { conflictConditionReason, detectConflicts } from '../../src/planning/conflicts.js';
import { clusterExport } from './fixtures.js';

const tcp = (name: string, port: number) => ({ name, protocol: 'TCP' as const, port });
const udp = (name: string, port: number) => ({ name, protocol: 'UDP' as const, port });
const older = (clusterId: string, over: Parameters<typeof clusterExport>[1] = {}) =>
  clusterExport(clusterId, { exportCreatedAtMs: 1_000, ...over });
const newer = (clusterId: string, over: Parameters<typeof clusterExport>[1] = {}) =>
  clusterExport(clusterId, { exportCreatedAtMs: 2_000, ...over });

describe('detectConflicts', () => {
  it.each<[string, ClusterExport[], string, string]>([
    ['one export', [older('a')], 'NoConflicts', 'a'],
    ['identical exports', [older('b'), newer('a')], 'NoConflicts', 'b'],
    [
      'same port name, different number',
      [older('a'), newer('b', { ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] })],
      'PortConflict',
      'a',
    ],
    [
      'same number, different name',
      [older('a'), newer('b', { ports: [{ name: 'web', protocol: 'TCP', port: 80 }] })],
      'PortConflict',
      'a',
    ],
    [
      'disjoint port sets (the union is exposed, still a conflict)',
      [older('a'), newer('b', { ports: [{ name: 'grpc', protocol: 'TCP', port: 9000 }] })],
      'PortConflict',
      'a',
    ],
    [
      'a newer export with an extra port (upstream conformance "union of ports")',
      [
        older('a', { ports: [tcp('tcp', 42), udp('udp', 42)] }),
        newer('b', { ports: [tcp('tcp', 42), { name: 'stcp', protocol: 'SCTP', port: 142 }] }),
      ],
      'PortConflict',
      'a',
    ],
    [
      'a newer export with fewer ports',
      [older('a', { ports: [tcp('http', 80), tcp('admin', 9000)] }), newer('b')],
      'PortConflict',
      'a',
    ],
    [
      'same number, other protocol',
      [older('a', { ports: [tcp('dns', 53)] }), newer('b', { ports: [udp('dns-udp', 53)] })],
      'PortConflict',
      'a',
    ],
    [
      'other appProtocol',
      [older('a'), newer('b', { ports: [{ ...tcp('http', 80), appProtocol: 'http2' }] })],
      'PortConflict',
      'a',
    ],
    [
      'same ports in another order',
      [
        older('a', { ports: [tcp('http', 80), tcp('admin', 9000)] }),
        newer('b', { ports: [tcp('admin', 9000), tcp('http', 80)] }),
      ],
      'NoConflicts',
      'a',
    ],
    [
      'other targetPort only (each cluster’s own business)',
      [
        older('a', { ports: [{ ...tcp('http', 80), targetPort: '8080' }] }),
        newer('b', { ports: [{ ...tcp('http', 80), targetPort: 'web' }] }),
      ],
      'NoConflicts',
      'a',
    ],
    ['type', [older('a'), newer('b', { type: 'Headless' })], 'TypeConflict', 'a'],
    [
      'several reasons, comma-joined and sorted',
      [
        older('a', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 10 }),
        newer('b', { type: 'Headless', exportedLabels: { x: 'y' } }),
      ],
      'LabelsConflict,SessionAffinityConflict,TypeConflict',
      'a',
    ],
    [
      'affinity timeout',
      [
        older('a', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 10 }),
        newer('b', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 20 }),
      ],
      'SessionAffinityConfigConflict',
      'a',
    ],
    [
      'internal traffic policy (unset = Cluster)',
      [
        older('a', { internalTrafficPolicy: 'Cluster' }),
        newer('b'),
        newer('c', { internalTrafficPolicy: 'Local' }),
      ],
      'InternalTrafficPolicyConflict',
      'a',
    ],
    [
      'traffic distribution',
      [older('a', { trafficDistribution: 'PreferClose' }), newer('b')],
      'TrafficDistributionConflict',
      'a',
    ],
    [
      'annotations',
      [
        older('a', { exportedAnnotations: { k: 'v' } }),
        newer('b', { exportedAnnotations: { k: 'w' } }),
      ],
      'AnnotationsConflict',
      'a',
    ],
    ['ip families', [older('a'), newer('b', { ipFamilies: ['IPv6'] })], 'IPFamilyConflict', 'a'],
    [
      'family order alone is no conflict',
      [older('a', { ipFamilies: ['IPv4', 'IPv6'] }), newer('b', { ipFamilies: ['IPv6', 'IPv4'] })],
      'NoConflicts',
      'a',
    ],
    [
      'tie broken by cluster id',
      [older('b', { type: 'Headless' }), older('a')],
      'TypeConflict',
      'a',
    ],
  ])('%s → %s, winner %s', (_, exports, reason, winner) => {
    const before = structuredClone(exports);
    const report = detectConflicts(exports);
    expect(conflictConditionReason(report)).toBe(reason);
    expect(report.winner).toBe(winner);
    expect(exports).toEqual(before);
    // Every cluster computes the same report, whatever the order it read the records in.
    expect(detectConflicts([...exports].reverse())).toEqual(report);
  });

  it('names the winner and counts who disagrees', () => {
    const report = detectConflicts([
      older('cluster-1'),
      newer('cluster-2', { ports: [{ name: 'http', protocol: 'TCP', port: 81 }] }),
      newer('cluster-3'),
    ]);
    expect(report.disagreeing).toEqual(['cluster-2']);
    expect(report.message).toBe(
      'Conflicting ports. Using the oldest service export, in "cluster-1". 1/3 clusters disagree.',
    );
  });

  it('compares only type and port clashes with the AWS controller’s endpoint-only records', () => {
    const legacy = clusterExport('legacy', { exportCreatedAtMs: 500 }, [], {
      hasExportRecord: false,
    });
    const ours = newer('a', { sessionAffinity: 'ClientIP', exportedLabels: { a: 'b' } });
    expect(detectConflicts([legacy, ours]).reasons).toEqual([]);
    expect(detectConflicts([legacy, newer('b', { type: 'Headless' })]).reasons).toEqual([
      'TypeConflict',
    ]);
    // Its ports are inferred from its endpoints (maybe a subset): another set is no conflict,
    // a clash is.
    const extra = newer('c', { ports: [tcp('http', 80), tcp('admin', 9000)] });
    expect(detectConflicts([legacy, extra]).reasons).toEqual([]);
    expect(detectConflicts([legacy, newer('d', { ports: [tcp('http', 81)] })]).reasons).toEqual([
      'PortConflict',
    ]);
  });

  it('a different port set counts every cluster that differs from the oldest', () => {
    const report = detectConflicts([
      older('c1'),
      newer('c2', { ports: [tcp('http', 80), tcp('admin', 9000)] }),
      newer('c3'),
      newer('c4', { ports: [tcp('grpc', 9090)] }),
    ]);
    expect(report.reasons).toEqual(['PortConflict']);
    expect(report.disagreeing).toEqual(['c2', 'c4']);
    expect(report.message).toBe(
      'Conflicting ports. Using the oldest service export, in "c1". 2/4 clusters disagree.',
    );
  });
});
