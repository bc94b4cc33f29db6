import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { encodeClusterExport } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import { statusCommand } from '../src/commands.js';
import type { ClustersetRecords } from '../src/cloudmap/records.js';
import type { StatusFacts } from '../src/status/build.js';
import { buildStatusReport } from '../src/status/build.js';
import { buildClustersetReport } from '../src/status/clusterset.js';
import { renderClusterset } from '../src/status/render-clusterset.js';
import { c1, c2, clusterExport, serviceExport, serviceImport, slice } from './fixtures.js';
import { fakeKube } from './helpers/fake-kube.js';

const NOW = Date.parse('2026-11-29T17:05:00Z');

const records = (...exports: ReturnType<typeof clusterExport>[]): ClustersetRecords => ({
  clustersetId: 'demo',
  namespaces: ['demo'],
  services:
    exports.length === 0 ? [] : [{ namespace: 'demo', name: 'hello', exports, rejected: [] }],
  heartbeats: [],
});

const report = (id: typeof c1, overrides: Partial<StatusFacts>) =>
  buildStatusReport({
    context: `ctx-${id.clusterId}`,
    server: 'https://x',
    identity: id,
    namespaces: ['demo'],
    exports: [],
    imports: [],
    slices: [],
    cloudMap: records(),
    nowMs: NOW,
    errors: [],
    ...overrides,
  });

const refused = serviceExport('hello', [
  {
    type: 'Valid',
    status: 'False',
    reason: 'NoService',
    message: 'Service demo/hello does not exist',
    lastTransitionTime: '',
  },
]);

describe('buildClustersetReport', () => {
  it('one row per service and cluster, no problem when every cluster imports', () => {
    const recs = records(clusterExport(c1, ['10.1.0.1']));
    const r = buildClustersetReport([
      report(c1, {
        exports: [serviceExport()],
        imports: [serviceImport(['c1'])],
        slices: [slice('c1', ['10.1.0.1'])],
        cloudMap: recs,
      }),
      report(c2, {
        imports: [serviceImport(['c1'])],
        slices: [slice('c1', ['10.1.0.1'])],
        cloudMap: recs,
      }),
    ]);
    expect(r.cells.map((c) => [c.cluster, c.export, c.records, c.import, c.problem])).toEqual([
      ['c1', 'exported', '1/1', 'Ready (c1 1/1)', ''],
      ['c2', '-', '-', 'Ready (c1 1/1)', ''],
    ]);
    expect(r.problems).toBe(false);
    expect(renderClusterset(r)).toContain('All imports present; no drift.');
  });

  it('names why an import is missing: records present, but no ServiceImport', () => {
    const recs = records(clusterExport(c1, ['10.1.0.1']));
    const r = buildClustersetReport([
      report(c1, {
        exports: [serviceExport()],
        imports: [serviceImport(['c1'])],
        slices: [slice('c1', ['10.1.0.1'])],
        cloudMap: recs,
      }),
      report(c2, { cloudMap: recs }),
    ]);
    const cell = r.cells.find((c) => c.cluster === 'c2');
    expect(cell?.import).toBe('missing');
    expect(cell?.problem).toMatch(/^Cloud Map has records from c1, but c2 has no ServiceImport/);
    expect(r.problems).toBe(true);
  });

  it('names why an import is missing: no records in Cloud Map', () => {
    const r = buildClustersetReport([report(c1, { exports: [serviceExport()] }), report(c2, {})]);
    expect(r.cells.map((c) => c.problem)).toEqual([
      expect.stringMatching(/^no records in Cloud Map from c1 \(ServiceExport Ready=True\)/),
      expect.stringMatching(/^no records in Cloud Map from c1/),
    ]);
  });

  it('names why an import is missing: the export was refused', () => {
    const r = buildClustersetReport([report(c1, { exports: [refused] }), report(c2, {})]);
    expect(r.cells[0]?.export).toBe(
      'refused: Valid=False NoService: Service demo/hello does not exist',
    );
    expect(r.cells[1]?.problem).toBe(
      'refused: ServiceExport in c1 Valid=False NoService: Service demo/hello does not exist',
    );
  });

  it('shows an unready ServiceImport with its condition', () => {
    const recs = records(clusterExport(c1, ['10.1.0.1']));
    const notReady = serviceImport(['c1'], {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'NameCollision',
          message: 'Service demo/x is not ours',
          lastTransitionTime: '',
        },
      ],
    });
    const r = buildClustersetReport([
      report(c1, {
        exports: [serviceExport()],
        imports: [notReady],
        slices: [slice('c1', ['10.1.0.1'])],
        cloudMap: recs,
      }),
    ]);
    expect(r.cells[0]).toMatchObject({
      import: 'Ready=False (c1 1/1)',
      problem: 'Ready=False NameCollision: Service demo/x is not ours',
    });
  });

  it('expects no import where the namespace does not exist', () => {
    const r = buildClustersetReport([
      report(c1, { exports: [serviceExport()] }),
      report(c2, { namespaces: [] }),
    ]);
    expect(r.cells[1]).toMatchObject({ import: '-', problem: '' });
  });
});

describe('statusCommand', () => {
  const out = () => {
    const chunks: string[] = [];
    return { chunks, io: { write: (t: string) => void chunks.push(t), now: () => NOW } };
  };
  function cloudMapWith(...exports: ReturnType<typeof clusterExport>[]) {
    const cm = createFakeCloudMap();
    cm.seedNamespace('demo');
    const svc = cm.seedService('demo', 'hello');
    for (const e of exports)
      for (const i of encodeClusterExport(e).instances) cm.seedInstance(svc.id, i.id, i.attributes);
    return { port: cm, endpoint: 'fake' };
  }
  const props = (id: typeof c1) => [
    { name: 'cluster.clusterset.k8s.io', value: id.clusterId },
    { name: 'clusterset.k8s.io', value: id.clustersetId },
  ];

  it('exits 1 with one table while an import is missing, naming why', async () => {
    const { chunks, io } = out();
    const code = await statusCommand(
      [
        fakeKube({
          context: 'ctx-c1',
          properties: props(c1),
          exports: [serviceExport()],
          imports: [serviceImport(['c1'])],
          slices: [slice('c1', ['10.1.0.1'])],
        }),
        fakeKube({ context: 'ctx-c2', properties: props(c2) }),
      ],
      cloudMapWith(clusterExport(c1, ['10.1.0.1'])),
      { output: 'table' },
      io,
    );
    expect(code).toBe(1);
    const text = chunks.join('');
    expect(text).toContain('Clusterset demo: c1 (context ctx-c1), c2 (context ctx-c2)');
    expect(text).toMatch(/demo\s+hello\s+c2\s+-\s+-\s+missing\s+Cloud Map has records from c1/);
    expect(text.match(/NAMESPACE\s+SERVICE\s+CLUSTER/g)).toHaveLength(1);
  });

  it('exits 0 on one context without drift, 1 with drift; prints YAML', async () => {
    const c1Kube = (imports = [serviceImport(['c1'])]) =>
      fakeKube({
        context: 'ctx-c1',
        properties: props(c1),
        exports: [serviceExport()],
        imports,
        slices: [slice('c1', ['10.1.0.1'])],
      });
    const cm = cloudMapWith(clusterExport(c1, ['10.1.0.1']));
    const ok = out();
    expect(await statusCommand([c1Kube()], cm, { output: 'yaml' }, ok.io)).toBe(0);
    expect(ok.chunks.join('')).toMatch(/^context: ctx-c1\nserver: https:\/\/fake\n/);
    expect(ok.chunks.join('')).toContain('drift: []');
    const drifting = out();
    expect(await statusCommand([c1Kube([])], cm, { output: 'json' }, drifting.io)).toBe(1);
    expect(JSON.parse(drifting.chunks.join('')).drift[0].kind).toBe('import-missing');
  });

  it('narrows to one namespace', async () => {
    const { chunks, io } = out();
    const other = { ...serviceExport('other'), namespace: 'elsewhere' };
    await statusCommand(
      [fakeKube({ properties: props(c1), namespaces: ['demo', 'elsewhere'], exports: [other] })],
      cloudMapWith(),
      { output: 'json', namespace: 'demo' },
      io,
    );
    const r = JSON.parse(chunks.join('')) as { exports: unknown[]; namespaces: string[] };
    expect(r.exports).toEqual([]);
    expect(r.namespaces).toEqual(['demo']);
  });
});
