import { describe, expect, it } from 'vitest';
import {
  clusterIdWarnings,
  identityRemediation,
  resolveClusterIdentity,
  validateClusterId,
  validateClustersetId,
} from '../../src/model/identity.js';

describe('KEP-2149 cluster id', () => {
  it.each([
    ['cluster-a', true],
    ['a', true],
    ['0', true],
    ['us-east-1.prod', true],
    ['3f2504e0-4f89-11d3-9a0c-0305e82c3301', true], // a kube-system UID
    ['a'.repeat(253), true],
    ['', false],
    ['Cluster-A', false],
    ['-a', false],
    ['a-', false],
    ['a..b', false],
    ['a_b', false],
    ['a b', false],
    ['.a', false],
    ['a'.repeat(254), false],
  ])('%j valid: %s', (value, valid) => {
    expect(validateClusterId(value) === undefined).toBe(valid);
  });

  it('warns from 128 characters on (KEP "should")', () => {
    expect(clusterIdWarnings('a'.repeat(127))).toEqual([]);
    expect(clusterIdWarnings('a'.repeat(128))).toHaveLength(1);
  });
});

describe('clusterset id', () => {
  it.each([
    ['clusterset1', true],
    ['Prod_Set:1', true],
    ['', false],
    ['has space', false],
    ['ünïcode', false],
    ['x'.repeat(1025), false],
  ])('%j valid: %s', (value, valid) => {
    expect(validateClustersetId(value) === undefined).toBe(valid);
  });
});

describe('resolveClusterIdentity', () => {
  it('takes both values from ClusterProperty', () => {
    expect(
      resolveClusterIdentity({ flags: {}, properties: { clusterId: 'c1', clustersetId: 'set' } }),
    ).toEqual({
      ok: true,
      identity: { clusterId: 'c1', clustersetId: 'set' },
      sources: { clusterId: 'ClusterProperty', clustersetId: 'ClusterProperty' },
      warnings: [],
    });
  });

  it('flags override ClusterProperty, with a warning on disagreement', () => {
    const r = resolveClusterIdentity({
      flags: { clusterId: 'c2' },
      properties: { clusterId: 'c1', clustersetId: 'set' },
    });
    expect(r).toMatchObject({
      ok: true,
      identity: { clusterId: 'c2', clustersetId: 'set' },
      sources: { clusterId: 'flag' },
    });
    expect(r.warnings).toEqual([
      'flag value for cluster.clusterset.k8s.io (c2) overrides ClusterProperty value (c1)',
    ]);
  });

  it('an empty flag is treated as absent', () => {
    const r = resolveClusterIdentity({
      flags: { clusterId: '' },
      properties: { clusterId: 'c1', clustersetId: 's' },
    });
    expect(r).toMatchObject({ ok: true, identity: { clusterId: 'c1' } });
  });

  it('missing properties give a message with the YAML to apply', () => {
    const r = resolveClusterIdentity({ flags: {}, properties: {} });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => [p.property, p.source])).toEqual([
      ['cluster.clusterset.k8s.io', 'missing'],
      ['clusterset.k8s.io', 'missing'],
    ]);
    expect(r.message).toContain('ClusterProperty cluster.clusterset.k8s.io does not exist');
    expect(r.message).toContain('kubectl apply -f -');
    expect(r.message).toContain(
      'apiVersion: about.k8s.io/v1beta1\nkind: ClusterProperty\nmetadata:\n  name: clusterset.k8s.io\nspec:\n  value: <clusterset name>',
    );
  });

  it('an invalid ClusterProperty value names the object and the rule', () => {
    const r = resolveClusterIdentity({
      flags: {},
      properties: { clusterId: 'Bad_ID', clustersetId: 'set' },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.objectContaining({ property: 'cluster.clusterset.k8s.io', source: 'ClusterProperty' }),
    ]);
    expect(r.message).toMatch(
      /ClusterProperty cluster\.clusterset\.k8s\.io spec\.value "Bad_ID" must be a lowercase RFC 1123 DNS subdomain/,
    );
    expect(r.message).not.toContain('name: clusterset.k8s.io\n');
  });

  it('an invalid flag says it was the flag', () => {
    const r = resolveClusterIdentity({
      flags: { clustersetId: 'a b' },
      properties: { clusterId: 'c', clustersetId: 'ok' },
    });
    expect(r).toMatchObject({
      ok: false,
      problems: [{ source: 'flag', property: 'clusterset.k8s.io' }],
    });
  });

  it('no problems, no message', () => {
    expect(identityRemediation([])).toBe('');
  });
});
