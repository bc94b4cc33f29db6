// The reconciler's hook for CloudMapServiceImports (ADR 0014): a selected non-Kubernetes
// service is imported like any export, goes when the selection goes, and MCS exports win.
import {
  createAddressPolicy,
  createLocalAddresses,
  LABEL_SOURCE_CLUSTER,
} from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import { isProblem, selectionOf } from '../src/external/selection.js';
import { translateInstances } from '../src/external/translate.js';
import { CLUSTERSET, endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

const sel = selectionOf({
  metadata: { name: 'payments', namespace: 'shop', generation: 1 },
  spec: { cloudMap: { namespace: 'ecs', service: 'payments' } },
});
if (isProblem(sel)) throw new Error(sel.message);
const external = translateInstances(
  sel,
  [
    {
      id: 'a',
      attributes: { AWS_INSTANCE_IPV4: '10.9.0.1', AWS_INSTANCE_PORT: '8080' },
      health: 'HEALTHY',
    },
    {
      id: 'b',
      attributes: { AWS_INSTANCE_IPV4: '10.9.0.2', AWS_INSTANCE_PORT: '8080' },
      health: 'UNHEALTHY',
    },
  ],
  { clustersetId: CLUSTERSET, addresses: createAddressPolicy([], createLocalAddresses()) },
).export!;

describe('external exports in the import reconciler', () => {
  it('imports the selection, labels its slices with the Cloud Map source, and removes it when the selection goes', async () => {
    const cluster = createFakeCluster(['shop']);
    let selected = true;
    const reconcile = reconcilerFor(cluster, staticSnapshot(), {
      externalExport: (ns, name) =>
        selected && `${ns}/${name}` === 'shop/payments' ? external : undefined,
    });
    await reconcile('shop/payments');
    await reconcile('shop/payments');
    const si = cluster.imports.get('shop/payments');
    expect(si?.metadata.labels?.['multicluster.cloudmap-mcs.io/external']).toBe('true');
    const slices = [...cluster.slices.values()];
    expect(slices.map((s) => s.metadata.labels?.[LABEL_SOURCE_CLUSTER])).toEqual([
      'cloudmap.ecs.payments',
    ]);
    expect(
      slices.flatMap((s) => s.endpoints.map((e) => [e.addresses[0], e.conditions?.ready])),
    ).toEqual([
      ['10.9.0.1', true],
      ['10.9.0.2', false],
    ]);
    selected = false;
    await reconcile('shop/payments');
    expect(cluster.imports.size).toBe(0);
    expect(cluster.slices.size).toBe(0);
    expect(cluster.services.size).toBe(0);
  });

  it('an MCS export of the same key wins over the selection', async () => {
    const cluster = createFakeCluster(['shop']);
    const snapshot = staticSnapshot();
    snapshot.set('shop', 'payments', [exportOf('c2', 'shop', 'payments', endpoints(1, 1))]);
    const reconcile = reconcilerFor(cluster, snapshot, { externalExport: () => external });
    await reconcile('shop/payments');
    await reconcile('shop/payments');
    const addresses = [...cluster.slices.values()].flatMap((s) =>
      s.endpoints.map((e) => e.addresses[0]),
    );
    expect(addresses).toEqual(['10.1.0.1']);
    expect(
      cluster.imports.get('shop/payments')?.metadata.labels?.[
        'multicluster.cloudmap-mcs.io/external'
      ],
    ).toBeUndefined();
  });
});
