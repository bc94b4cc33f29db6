import { describe, expect, it } from 'vitest';
import type { ClusterExport } from '../../src/index.js';
import { conflictConditionReason, detectConflicts } from '../../src/planning/conflicts.js';
import { clusterExport } from './fixtures.js';

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
      'disjoint ports merge without conflict',
      [older('a'), newer('b', { ports: [{ name: 'grpc', protocol: 'TCP', port: 9000 }] })],
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

  it('compares only type and ports with the AWS controller’s endpoint-only records', () => {
    const legacy = clusterExport('legacy', { exportCreatedAtMs: 500 }, [], {
      hasExportRecord: false,
    });
    const ours = newer('a', { sessionAffinity: 'ClientIP', exportedLabels: { a: 'b' } });
    expect(detectConflicts([legacy, ours]).reasons).toEqual([]);
    expect(detectConflicts([legacy, newer('b', { type: 'Headless' })]).reasons).toEqual([
      'TypeConflict',
    ]);
  });
});
