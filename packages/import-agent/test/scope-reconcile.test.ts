// Issue 11 item 3: Cloud Map cannot make this cluster create imports outside the namespace
// policy, nor beyond the caps; every refusal is counted under one metric.
import { createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

function setup(namespaces: string[]) {
  const cluster = createFakeCluster(namespaces);
  const snapshot = staticSnapshot();
  const refused: string[] = [];
  const logger = createMemoryLogger();
  const publish = (ns: string, name: string) =>
    snapshot.set(ns, name, [exportOf('c1', ns, name, endpoints(1, 1))]);
  return { cluster, snapshot, refused, logger, publish };
}

describe('namespace policy in the reconciler', () => {
  it('creates nothing in kube-system or default, counts and logs the refusal once', async () => {
    const { cluster, snapshot, refused, logger, publish } = setup([
      'kube-system',
      'default',
      'shop',
    ]);
    const reconcile = reconcilerFor(cluster, snapshot, {
      logger,
      metrics: { refused: (r) => void refused.push(r) },
    });
    publish('kube-system', 'kubernetes');
    publish('default', 'kubernetes');
    publish('shop', 'cart');
    for (const key of ['kube-system/kubernetes', 'default/kubernetes', 'shop/cart']) {
      await reconcile(key);
      await reconcile(key);
    }
    expect([...cluster.imports.keys()]).toEqual(['shop/cart']);
    expect([...cluster.services.values()].map((s) => s.metadata.namespace)).toEqual(['shop']);
    expect(refused).toEqual(Array(4).fill('namespace-denied'));
    expect(
      logger.entries
        .filter((e) => e.fields['reason'] === 'namespace-denied')
        .map((e) => e.fields['subject']),
    ).toEqual(['kube-system/kubernetes', 'default/kubernetes']);
  });

  it('an explicit allow opts default in', async () => {
    const { cluster, snapshot, publish } = setup(['default']);
    const reconcile = reconcilerFor(cluster, snapshot, {
      namespaces: { allowed: ['default'], denied: ['kube-system', 'default'] },
    });
    publish('default', 'web');
    await reconcile('default/web');
    expect(cluster.imports.has('default/web')).toBe(true);
  });

  it('removes our import from a namespace the policy no longer allows (consent withdrawn)', async () => {
    const { cluster, snapshot, publish } = setup(['shop']);
    publish('shop', 'cart');
    await reconcilerFor(cluster, snapshot)('shop/cart');
    expect(cluster.imports.size + cluster.services.size + cluster.slices.size).toBe(3);
    // Restarted with shop denied: the replay of our imports removes it.
    const denied = reconcilerFor(cluster, snapshot, {
      namespaces: { allowed: [], denied: ['shop'] },
    });
    await denied('shop/cart');
    expect(cluster.imports.size + cluster.services.size + cluster.slices.size).toBe(0);
  });
});

describe('Cloud Map service names that cannot be imported', () => {
  it('are counted refusals, not reconcile errors, and nothing is written', async () => {
    const { cluster, snapshot, refused, publish } = setup(['shop']);
    const reconcile = reconcilerFor(cluster, snapshot, {
      metrics: { refused: (r) => void refused.push(r) },
    });
    for (const name of ['Evil_Name', '_underscore', 'x'.repeat(64)]) {
      publish('shop', name);
      await expect(reconcile(`shop/${name}`)).resolves.toBeUndefined();
    }
    expect(cluster.writes).toBe(0);
    expect(refused).toEqual(Array(3).fill('invalid-service-name'));
  });
});

describe('import caps in the reconciler', () => {
  it('refuses imports beyond the per-namespace cap and takes a freed slot later', async () => {
    const { cluster, snapshot, refused, publish } = setup(['shop', 'web']);
    const reconcile = reconcilerFor(cluster, snapshot, {
      caps: { perNamespace: 2, total: 3 },
      metrics: { refused: (r) => void refused.push(r) },
    });
    for (const name of ['a', 'b', 'c']) publish('shop', name);
    for (const name of ['x', 'y']) publish('web', name);
    expect(await reconcile('shop/a')).toBeUndefined();
    expect(await reconcile('shop/b')).toBeUndefined();
    expect(await reconcile('shop/c')).toEqual({ requeueAfterMs: 60_000 });
    expect(await reconcile('web/x')).toBeUndefined();
    expect(await reconcile('web/y')).toEqual({ requeueAfterMs: 60_000 });
    expect([...cluster.imports.keys()].sort()).toEqual(['shop/a', 'shop/b', 'web/x']);
    expect(cluster.services.size).toBe(3);
    expect(refused).toEqual(['import-cap', 'import-cap']);
    // Existing imports keep reconciling at the cap.
    expect(await reconcile('shop/a')).toBeUndefined();
    // shop/a unexported: its slot goes to the refused shop/c on its re-check.
    snapshot.set('shop', 'a', []);
    await reconcile('shop/a');
    expect(await reconcile('shop/c')).toBeUndefined();
    expect([...cluster.imports.keys()].sort()).toEqual(['shop/b', 'shop/c', 'web/x']);
  });
});
