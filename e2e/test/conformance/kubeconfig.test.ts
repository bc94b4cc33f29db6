import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeconfigYaml, mergeKubeconfigYaml } from '../../src/kubeconfig.js';

const one = (name: string, user = `${name}-admin`) =>
  kubeconfigYaml({ name, server: `https://127.0.0.1:1/${name}`, caPem: 'ca', user, token: 't' });

describe('mergeKubeconfigYaml', () => {
  it('keeps every cluster, user and context, the first context current', () => {
    const merged = loadYaml<{
      contexts: { name: string; context: { cluster: string; user: string } }[];
      clusters: { name: string }[];
      users: { name: string }[];
      'current-context': string;
    }>(mergeKubeconfigYaml([one('c1'), one('c2')]));
    expect(merged.contexts.map((c) => [c.name, c.context.cluster, c.context.user])).toEqual([
      ['c1', 'c1', 'c1-admin'],
      ['c2', 'c2', 'c2-admin'],
    ]);
    expect(merged.clusters.map((c) => c.name)).toEqual(['c1', 'c2']);
    expect(merged.users.map((u) => u.name)).toEqual(['c1-admin', 'c2-admin']);
    expect(merged['current-context']).toBe('c1');
  });

  it('refuses two entries with the same name', () => {
    expect(() => mergeKubeconfigYaml([one('c1', 'admin'), one('c2', 'admin')])).toThrow(
      'two users named admin',
    );
  });
});
