import { describe, expect, it } from 'vitest';
import { checkClusterProperties } from '../src/doctor/cluster-properties.js';

describe('checkClusterProperties', () => {
  it('passes with both properties', () => {
    const r = checkClusterProperties([
      { name: 'cluster.clusterset.k8s.io', value: 'c1' },
      { name: 'clusterset.k8s.io', value: 'demo' },
    ]);
    expect(r.map((x) => `${x.status} ${x.subject} ${x.message}`)).toEqual([
      'ok ClusterProperty cluster.clusterset.k8s.io = c1',
      'ok ClusterProperty clusterset.k8s.io = demo',
    ]);
  });

  it('fails a missing property with the manifest that creates it', () => {
    const [cluster, set] = checkClusterProperties([{ name: 'clusterset.k8s.io', value: 'demo' }]);
    expect(cluster).toMatchObject({ status: 'fail', message: 'missing' });
    expect(cluster?.fix).toContain('kind: ClusterProperty');
    expect(cluster?.fix).toContain('name: cluster.clusterset.k8s.io');
    expect(set?.status).toBe('ok');
  });

  it('fails an invalid cluster id and warns on a dotted one', () => {
    expect(
      checkClusterProperties([{ name: 'cluster.clusterset.k8s.io', value: 'Bad_Id' }])[0],
    ).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('replace it with a valid value') as unknown,
    });
    expect(
      checkClusterProperties([
        { name: 'cluster.clusterset.k8s.io', value: 'c1.eu' },
        { name: 'clusterset.k8s.io', value: 'demo' },
      ])[0]?.status,
    ).toBe('warn');
  });

  it('fails both when the CRD is not served', () => {
    const r = checkClusterProperties(undefined);
    expect(r.map((x) => x.status)).toEqual(['fail', 'fail']);
    expect(r[0]?.fix).toContain('install the CRD');
  });
});
