// The interop suite's expectations (e2e/src/interop): what Cloud Map must hold for a set of
// exports, and when a cluster's import view is the expected one.
import { describe, expect, it } from 'vitest';
import { expectedRecords, instanceLine } from '../src/interop/cloudmap.js';
import { sliceManager, viewMatches, type ImportView } from '../src/interop/imports.js';

describe('expectedRecords', () => {
  it("lists every cluster's endpoints, our export records and our heartbeat while we export", () => {
    const exports = new Map([
      ['both', { c1: ['10.1.0.2'], c2: ['10.2.0.1', '10.2.0.2'] }],
      ['theirs', { c1: ['10.1.0.1'] }],
      ['empty', { c2: [] }],
    ]);
    expect(expectedRecords('ns', exports, 'c2')).toEqual({
      'ns/both': [
        'c1:endpoint:10.1.0.2',
        'c2:endpoint:10.2.0.1',
        'c2:endpoint:10.2.0.2',
        'c2:export:',
      ],
      'ns/theirs': ['c1:endpoint:10.1.0.1'],
      'ns/empty': ['c2:export:'],
      'ns/_mcs-heartbeat': ['c2:heartbeat:'],
    });
  });

  it('expects no heartbeat once we export nothing in the namespace', () => {
    expect(expectedRecords('ns', new Map([['theirs', { c1: ['10.1.0.1'] }]]), 'c2')).toEqual({
      'ns/theirs': ['c1:endpoint:10.1.0.1'],
    });
  });

  it("reads the AWS controller's instances (no MCS_RECORD) as endpoints", () => {
    expect(instanceLine({ CLUSTER_ID: 'c1', AWS_INSTANCE_IPV4: '10.1.0.1' })).toBe(
      'c1:endpoint:10.1.0.1',
    );
    expect(instanceLine({ CLUSTER_ID: 'c2', MCS_RECORD: 'feed' })).toBe('c2:feed:');
  });
});

describe('viewMatches', () => {
  const view = (v: Partial<ImportView>): ImportView => ({
    byCluster: {},
    managers: [],
    serviceImport: false,
    ...v,
  });
  const ours = sliceManager.ours;

  it('compares clusters and addresses whatever their order', () => {
    const v = view({
      byCluster: { c1: ['10.1.0.1', '10.1.0.2'], c2: ['10.2.0.1'] },
      managers: [ours],
      serviceImport: true,
    });
    expect(viewMatches(v, { c2: ['10.2.0.1'], c1: ['10.1.0.2', '10.1.0.1'] }, ours)).toBe(true);
    expect(viewMatches(v, { c1: ['10.1.0.1', '10.1.0.2'] }, ours)).toBe(false);
  });

  it("wants the slices of the cluster's importer only, under a ServiceImport", () => {
    const byCluster = { c1: ['10.1.0.1'] };
    const want = { c1: ['10.1.0.1'] };
    expect(viewMatches(view({ byCluster, managers: [ours] }), want, ours)).toBe(false);
    expect(
      viewMatches(
        view({ byCluster, managers: [ours, sliceManager.controller], serviceImport: true }),
        want,
        ours,
      ),
    ).toBe(false);
  });

  it('reads an empty expectation as: the import is gone', () => {
    expect(viewMatches(view({}), { c1: [] }, ours)).toBe(true);
    expect(viewMatches(view({ serviceImport: true }), {}, ours)).toBe(false);
  });
});
