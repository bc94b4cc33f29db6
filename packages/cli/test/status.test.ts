import { describe, expect, it } from 'vitest';
import type { ClustersetRecords } from '../src/cloudmap/records.js';
import type { StatusFacts } from '../src/status/build.js';
import { buildStatusReport } from '../src/status/build.js';
import { renderStatus } from '../src/status/render.js';
import { c1, c2, clusterExport, serviceExport, serviceImport, slice } from './fixtures.js';

const NOW = Date.parse('2026-11-29T17:05:00Z');

function records(...exports: ReturnType<typeof clusterExport>[]): ClustersetRecords {
  return {
    clustersetId: 'demo',
    namespaces: ['demo'],
    services:
      exports.length === 0 ? [] : [{ namespace: 'demo', name: 'hello', exports, rejected: [] }],
    heartbeats: [{ cluster: c1, renewedAtMs: NOW - 4000 }],
  };
}

function facts(overrides: Partial<StatusFacts> = {}): StatusFacts {
  return {
    context: 'c1',
    server: 'https://127.0.0.1:6443',
    identity: c1,
    namespaces: ['demo'],
    exports: [serviceExport()],
    imports: [serviceImport(['c1', 'c2'])],
    slices: [slice('c1', ['10.1.0.1', '10.1.0.2']), slice('c2', ['10.2.0.1'])],
    cloudMap: records(clusterExport(c1, ['10.1.0.1', '10.1.0.2']), clusterExport(c2, ['10.2.0.1'])),
    nowMs: NOW,
    errors: [],
    ...overrides,
  };
}

describe('buildStatusReport', () => {
  it('reports exports, imports with endpoint counts per cluster, and records, without drift when they agree', () => {
    const r = buildStatusReport(facts());
    expect(r.exports).toMatchObject([
      {
        namespace: 'demo',
        name: 'hello',
        valid: 'True',
        ready: 'True',
        conflict: 'False',
        problems: [],
      },
    ]);
    expect(r.imports).toEqual([
      {
        namespace: 'demo',
        name: 'hello',
        type: 'ClusterSetIP',
        ips: ['10.0.0.42'],
        ports: ['http:80/TCP'],
        clusters: [
          { cluster: 'c1', endpoints: 2, readyEndpoints: 2 },
          { cluster: 'c2', endpoints: 1, readyEndpoints: 1 },
        ],
        ready: 'True',
        problems: [],
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '' },
        ],
      },
    ]);
    expect(r.cloudMap).toMatchObject({
      available: true,
      services: [
        {
          name: 'hello',
          clusters: [
            {
              cluster: 'c1',
              endpoints: 2,
              readyEndpoints: 2,
              hasExportRecord: true,
              ports: ['http:80/TCP'],
            },
            { cluster: 'c2', endpoints: 1 },
          ],
        },
      ],
      heartbeats: [{ cluster: 'c1', ageSeconds: 4 }],
    });
    expect(r.drift).toEqual([]);
  });

  it('lists the unhealthy conditions of an export as problems', () => {
    const r = buildStatusReport(
      facts({
        exports: [
          serviceExport('hello', [
            { type: 'Valid', status: 'True', reason: 'Valid', message: '', lastTransitionTime: '' },
            {
              type: 'Conflict',
              status: 'True',
              reason: 'PortConflict',
              message: 'port 80 differs',
              lastTransitionTime: '',
            },
          ]),
        ],
      }),
    );
    expect(r.exports[0]?.problems).toEqual(['Conflict=True PortConflict: port 80 differs']);
    expect(r.exports[0]?.ready).toBe('');
  });

  it.each<[string, Partial<StatusFacts>, string[]]>([
    [
      'export missing from Cloud Map',
      {
        cloudMap: records(clusterExport(c2, ['10.2.0.1'])),
        imports: [serviceImport(['c2'])],
        slices: [slice('c2', ['10.2.0.1'])],
      },
      ['not-in-cloudmap demo/hello c1'],
    ],
    [
      'invalid export rightly absent from Cloud Map',
      {
        exports: [
          serviceExport('hello', [
            {
              type: 'Valid',
              status: 'False',
              reason: 'NoService',
              message: '',
              lastTransitionTime: '',
            },
          ]),
        ],
        cloudMap: records(clusterExport(c2, ['10.2.0.1'])),
        imports: [serviceImport(['c2'])],
        slices: [slice('c2', ['10.2.0.1'])],
      },
      [],
    ],
    [
      'records of this cluster without a ServiceExport',
      { exports: [] },
      ['stale-in-cloudmap demo/hello c1'],
    ],
    ['ServiceImport missing', { imports: [], slices: [] }, ['import-missing demo/hello -']],
    [
      'ServiceImport without exports',
      { exports: [], cloudMap: records() },
      ['import-orphaned demo/hello -'],
    ],
    [
      'ServiceImport lists other clusters',
      { imports: [serviceImport(['c1'])], slices: [slice('c1', ['10.1.0.1', '10.1.0.2'])] },
      ['import-clusters demo/hello -'],
    ],
    [
      'endpoint counts differ',
      { slices: [slice('c1', ['10.1.0.1']), slice('c2', ['10.2.0.1'])] },
      ['import-endpoints demo/hello c1'],
    ],
    [
      'ServiceImport not ready',
      {
        imports: [
          serviceImport(['c1', 'c2'], {
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'NameCollision',
                message: 'Service demo/derived-x is not ours',
                lastTransitionTime: '',
              },
            ],
          }),
        ],
      },
      ['import-not-ready demo/hello -'],
    ],
    [
      'ClusterSetIP import without IP',
      { imports: [serviceImport(['c1', 'c2'], { ips: [] })] },
      ['no-clusterset-ip demo/hello -'],
    ],
  ])('drift: %s', (_name, overrides, expected) => {
    const drift = buildStatusReport(facts(overrides)).drift ?? [];
    expect(drift.map((d) => `${d.kind} ${d.namespace}/${d.name} ${d.cluster ?? '-'}`)).toEqual(
      expected,
    );
  });

  it('counts an address once when it appears in two slices of the same cluster', () => {
    const r = buildStatusReport(
      facts({
        slices: [
          slice('c1', ['10.1.0.1']),
          slice('c1', ['10.1.0.1', '10.1.0.2']),
          slice('c2', ['10.2.0.1']),
        ],
      }),
    );
    expect(r.imports[0]?.clusters[0]).toEqual({ cluster: 'c1', endpoints: 2, readyEndpoints: 2 });
    expect(r.drift).toEqual([]);
  });

  it('does not compute drift without Cloud Map or without an identity', () => {
    expect(buildStatusReport(facts({ cloudMap: { error: 'unreachable' } }))).toMatchObject({
      cloudMap: { available: false, reason: 'unreachable' },
      drift: null,
    });
    expect(buildStatusReport(facts({ identity: undefined })).drift).toBeNull();
  });
});

describe('renderStatus', () => {
  it('renders every section as a table', () => {
    const text = renderStatus(buildStatusReport(facts()), NOW);
    expect(text).toContain('cluster c1 in clusterset demo');
    expect(text).toMatch(/demo\s+hello\s+True\s+True\s+False\s+5m/);
    expect(text).toMatch(
      /demo\s+hello\s+ClusterSetIP\s+10\.0\.0\.42\s+http:80\/TCP\s+True\s+c1 \(2\/2\), c2 \(1\/1\)/,
    );
    expect(text).toMatch(/demo\s+hello\s+c2\s+ClusterSetIP\s+http:80\/TCP\s+1\/1\s+yes/);
    expect(text).toContain('heartbeats: c1 4s ago');
    expect(text).toContain('Drift: none');
  });

  it('says why Cloud Map and drift are missing', () => {
    const text = renderStatus(
      buildStatusReport(
        facts({ identity: undefined, cloudMap: { error: 'no region' }, errors: ['boom'] }),
      ),
      NOW,
    );
    expect(text).toContain('cluster identity unknown');
    expect(text).toContain('Cloud Map: not read (no region)');
    expect(text).toContain('Drift: not computed');
    expect(text).toContain('error: boom');
  });

  it('lists drift', () => {
    const text = renderStatus(buildStatusReport(facts({ imports: [], slices: [] })), NOW);
    expect(text).toMatch(
      /Drift \(1\)\n\s+KIND\s+SERVICE\s+DETAIL\n\s+import-missing\s+demo\/hello\s+Cloud Map has records from c1, c2, but there is no ServiceImport here/,
    );
  });
});
