import { describe, expect, it } from 'vitest';
import type { ServicePort } from '../../src/index.js';
import { detectConflicts, mergeExports, type MergedImport } from '../../src/planning/index.js';
import { clusterExport, endpoint, frozen } from './fixtures.js';

const tcp = (name: string, port: number) => ({ name, protocol: 'TCP' as const, port });
const udp = (name: string, port: number) => ({ name, protocol: 'UDP' as const, port });

describe('mergeExports', () => {
  it('no exports, no import', () => {
    expect(mergeExports([])).toBeUndefined();
  });

  it('a single export becomes the import as is', () => {
    const merged = mergeExports(frozen([clusterExport('c1', {}, [endpoint('10.0.0.1')])]));
    expect(merged).toMatchObject({
      spec: {
        type: 'ClusterSetIP',
        ports: [{ ...tcp('http', 80), serviceName: 'http' }],
        ipFamilies: ['IPv4'],
        sessionAffinity: 'None',
      },
      clusters: ['c1'],
      winner: 'c1',
      conflicts: [],
    });
    expect(merged?.sources[0]?.endpoints).toEqual([endpoint('10.0.0.1')]);
  });

  type PortCase = [string, [number, ServicePort[]][], string[], boolean];
  it.each<PortCase>([
    [
      'identical ports',
      [
        [1, [tcp('http', 80)]],
        [2, [tcp('http', 80)]],
      ],
      ['http TCP 80'],
      false,
    ],
    [
      'disjoint ports are unioned (and conflict)',
      [
        [1, [tcp('http', 80)]],
        [2, [tcp('grpc', 9090)]],
      ],
      ['http TCP 80', 'grpc TCP 9090'],
      true,
    ],
    [
      'same name, other number: oldest wins',
      [
        [2, [tcp('http', 80)]],
        [1, [tcp('http', 8080)]],
      ],
      ['http TCP 8080'],
      true,
    ],
    [
      'same number, other name: oldest wins',
      [
        [1, [tcp('web', 80)]],
        [2, [tcp('http', 80)]],
      ],
      ['web TCP 80'],
      true,
    ],
    [
      'same number, other protocol: both',
      [
        [1, [tcp('dns', 53)]],
        [2, [udp('dnsu', 53)]],
      ],
      ['dns TCP 53', 'dnsu UDP 53'],
      true,
    ],
    [
      'name first, then number',
      [
        [1, [tcp('a', 80), tcp('b', 81)]],
        [2, [tcp('b', 80)]],
      ],
      ['a TCP 80', 'b TCP 81'],
      true,
    ],
    [
      'two unnamed ports: one empty name only',
      [
        [1, [tcp('', 80)]],
        [2, [tcp('', 443)]],
      ],
      [' TCP 80'],
      true,
    ],
    [
      'unnamed and named',
      [
        [1, [tcp('', 80)]],
        [2, [tcp('https', 443)]],
      ],
      [' TCP 80', 'https TCP 443'],
      true,
    ],
  ])('ports: %s', (_name, clusters, expected, conflict) => {
    const merged = mergeExports(
      frozen(
        clusters.map(([age, ports], i) =>
          clusterExport(`c${String(i + 1)}`, { ports, exportCreatedAtMs: age }),
        ),
      ),
    ) as MergedImport;
    expect(merged.spec.ports.map((p) => `${p.name} ${p.protocol} ${String(p.port)}`)).toEqual(
      expected,
    );
    expect(merged.conflicts.includes('PortConflict')).toBe(conflict);
    const names = merged.spec.ports.map((p) => p.serviceName);
    expect(new Set(names).size).toBe(names.length);
    if (names.length > 1) expect(names.every((n) => n !== '')).toBe(true);
  });

  it('endpoints only serve the merged ports their cluster actually exposes', () => {
    const merged = mergeExports([
      clusterExport('c1', { ports: [tcp('', 80)], exportCreatedAtMs: 1 }, [
        endpoint('10.0.0.1', { ports: [{ name: '', protocol: 'TCP', port: 8080 }] }),
      ]),
      clusterExport('c2', { ports: [tcp('', 443), tcp('metrics', 9100)], exportCreatedAtMs: 2 }, [
        endpoint('10.0.0.2', {
          ports: [
            { name: '', protocol: 'TCP', port: 8443 },
            { name: 'metrics', protocol: 'TCP', port: 9100 },
          ],
        }),
      ]),
      clusterExport('c3', { ports: [tcp('web', 80)], exportCreatedAtMs: 3 }, [
        endpoint('10.0.0.3', { ports: [{ name: 'web', protocol: 'TCP', port: 3000 }] }),
      ]),
    ]) as MergedImport;
    expect(merged.spec.ports).toEqual([
      { ...tcp('', 80), serviceName: 'tcp-80' },
      { ...tcp('metrics', 9100), serviceName: 'metrics' },
    ]);
    const ports = Object.fromEntries(
      merged.sources.map((s) => [s.clusterId, s.endpoints[0]?.ports]),
    );
    expect(ports).toEqual({
      c1: [{ name: 'tcp-80', protocol: 'TCP', port: 8080 }],
      // c2's unnamed 443 is not port 80: its endpoints get no traffic for it.
      c2: [{ name: 'metrics', protocol: 'TCP', port: 9100 }],
      // c3 calls port 80 "web": same protocol and number, so it serves the merged port.
      c3: [{ name: 'tcp-80', protocol: 'TCP', port: 3000 }],
    });
  });

  it.each([
    [
      'oldest wins',
      [
        ['c1', 2],
        ['c2', 1],
      ],
      'c2',
    ],
    [
      'ties go to the lower cluster id',
      [
        ['cb', 5],
        ['ca', 5],
      ],
      'ca',
    ],
  ] as const)('properties: %s', (_name, ages, winner) => {
    const exports = ages.map(([id, age]) =>
      clusterExport(id, {
        exportCreatedAtMs: age,
        type: id === winner ? 'Headless' : 'ClusterSetIP',
        sessionAffinity: id === winner ? 'ClientIP' : 'None',
        sessionAffinityTimeoutSeconds: id === winner ? 600 : 30,
        internalTrafficPolicy: id === winner ? 'Local' : 'Cluster',
        trafficDistribution: id === winner ? 'PreferClose' : 'PreferSameZone',
        exportedLabels: { owner: id },
        exportedAnnotations: id === winner ? { a: '1' } : {},
      }),
    );
    const merged = mergeExports(frozen(exports)) as MergedImport;
    expect(merged.winner).toBe(winner);
    expect(merged.spec).toMatchObject({
      type: 'Headless',
      sessionAffinity: 'ClientIP',
      sessionAffinityTimeoutSeconds: 600,
      internalTrafficPolicy: 'Local',
      trafficDistribution: 'PreferClose',
    });
    expect(merged.labels).toEqual({ owner: winner });
    expect(merged.annotations).toEqual({ a: '1' });
    // The same reasons the ServiceExports carry (detectConflicts): the timeout is only
    // compared when both clusters use ClientIP, so here only SessionAffinityConflict.
    expect(merged.conflicts).toEqual([
      'AnnotationsConflict',
      'InternalTrafficPolicyConflict',
      'LabelsConflict',
      'SessionAffinityConflict',
      'TrafficDistributionConflict',
      'TypeConflict',
    ]);
    expect(merged.conflicts).toEqual(detectConflicts(exports).reasons);
    expect(merged.clusters).toEqual([...ages.map(([id]) => id)].sort());
  });

  it.each([
    [
      'both ClientIP, other timeouts',
      'ClientIP',
      600,
      'ClientIP',
      30,
      ['SessionAffinityConfigConflict'],
    ],
    ['timeout differs without ClientIP', 'None', 600, 'None', 30, []],
    ['unset internal traffic policy equals Cluster', 'None', undefined, 'None', undefined, []],
  ] as const)('conflicts agree with the export side: %s', (_n, a1, t1, a2, t2, expected) => {
    const exports = [
      clusterExport('c1', {
        exportCreatedAtMs: 1,
        sessionAffinity: a1,
        ...(t1 === undefined ? {} : { sessionAffinityTimeoutSeconds: t1 }),
        internalTrafficPolicy: 'Cluster',
      }),
      clusterExport('c2', {
        exportCreatedAtMs: 2,
        sessionAffinity: a2,
        ...(t2 === undefined ? {} : { sessionAffinityTimeoutSeconds: t2 }),
      }),
    ];
    const merged = mergeExports(exports) as MergedImport;
    expect(merged.conflicts).toEqual(expected);
    expect(merged.conflicts).toEqual(detectConflicts(exports).reasons);
  });

  it('a port that only shares the name (tcp 4242 vs the oldest tcp 42) does not serve it', () => {
    // The upstream conformance test "same port name but different port numbers on each
    // cluster": ten requests in a row to port 42 must all reach the cluster that exposes 42.
    const merged = mergeExports([
      clusterExport('c1', { ports: [tcp('tcp', 42)], exportCreatedAtMs: 1 }, [
        endpoint('10.1.0.27', { ports: [{ name: 'tcp', protocol: 'TCP', port: 42 }] }),
      ]),
      clusterExport('c2', { ports: [tcp('tcp', 4242)], exportCreatedAtMs: 2 }, [
        endpoint('10.2.0.15', { ports: [{ name: 'tcp', protocol: 'TCP', port: 42 }] }),
      ]),
    ]) as MergedImport;
    expect(merged.spec.ports).toEqual([{ ...tcp('tcp', 42), serviceName: 'tcp' }]);
    expect(merged.conflicts).toContain('PortConflict');
    const ports = Object.fromEntries(
      merged.sources.map((s) => [s.clusterId, s.endpoints[0]?.ports]),
    );
    expect(ports).toEqual({ c1: [{ name: 'tcp', protocol: 'TCP', port: 42 }], c2: [] });
  });

  it('the session affinity timeout only applies to ClientIP', () => {
    const merged = mergeExports([clusterExport('c1', { sessionAffinityTimeoutSeconds: 10 })]);
    expect(merged?.spec).not.toHaveProperty('sessionAffinityTimeoutSeconds');
  });

  it.each([
    ['same families', [['IPv4'], ['IPv4']], ['IPv4'], false],
    ['union in the oldest order', [['IPv6'], ['IPv4']], ['IPv6', 'IPv4'], true],
    ['dual-stack and single', [['IPv4', 'IPv6'], ['IPv6']], ['IPv4', 'IPv6'], true],
  ] as const)('ipFamilies: %s', (_name, families, expected, conflict) => {
    const merged = mergeExports(
      families.map((f, i) =>
        clusterExport(`c${String(i)}`, { ipFamilies: [...f], exportCreatedAtMs: i }),
      ),
    ) as MergedImport;
    expect(merged.spec.ipFamilies).toEqual(expected);
    expect(merged.conflicts.includes('IPFamilyConflict')).toBe(conflict);
  });

  it('reads AWS Go controller exports (no export record): families from the endpoints', () => {
    const aws = clusterExport(
      'aws1',
      { ipFamilies: [], exportCreatedAtMs: 5 },
      [endpoint('fd00::1'), endpoint('fd00::2')],
      {
        hasExportRecord: false,
      },
    );
    const ours = clusterExport('ours', { ipFamilies: ['IPv6'], exportCreatedAtMs: 9 }, [
      endpoint('fd00::3'),
    ]);
    const merged = mergeExports([ours, aws]) as MergedImport;
    expect(merged.winner).toBe('aws1');
    expect(merged.spec.ipFamilies).toEqual(['IPv6']);
    expect(merged.conflicts).toEqual([]);
    expect(merged.sources.map((s) => [s.clusterId, s.endpoints.length])).toEqual([
      ['aws1', 2],
      ['ours', 1],
    ]);
  });

  it('keeps one export per cluster (its oldest)', () => {
    const merged = mergeExports([
      clusterExport('c1', { exportCreatedAtMs: 9, type: 'Headless' }),
      clusterExport('c1', { exportCreatedAtMs: 1 }),
    ]) as MergedImport;
    expect(merged.clusters).toEqual(['c1']);
    expect(merged.spec.type).toBe('ClusterSetIP');
  });

  it('golden: a three-cluster merge', async () => {
    const merged = mergeExports(
      frozen([
        clusterExport(
          'east',
          {
            ports: [tcp('http', 80), tcp('grpc', 9090)],
            exportCreatedAtMs: 300,
            exportedLabels: { tier: 'web' },
          },
          [
            endpoint('10.0.0.1', { zone: 'a', nodeName: 'n1', hostname: 'cart-0' }),
            endpoint('10.0.0.2', {
              conditions: { ready: false, serving: true, terminating: true },
            }),
          ],
        ),
        clusterExport(
          'west',
          { ports: [tcp('http', 8080)], exportCreatedAtMs: 100, type: 'ClusterSetIP' },
          [endpoint('10.0.0.1')],
        ),
        clusterExport('north', { ports: [udp('', 53)], exportCreatedAtMs: 200, type: 'Headless' }, [
          endpoint('fd00::9', { ports: [{ name: '', protocol: 'UDP', port: 5353 }] }),
        ]),
      ]),
    );
    await expect(JSON.stringify(merged, null, 2) + '\n').toMatchFileSnapshot(
      'golden/merge-three-clusters.json.snap',
    );
  });
});
