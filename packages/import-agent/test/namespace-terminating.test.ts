import { ApiException } from '@kubernetes/client-node';
import { createMemoryLogger } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { translateWriteError } from '../src/kube/kube-writer.js';
import { NamespaceTerminatingError } from '../src/reconcile/ports.js';
import { endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

// Issue 12: an EndpointSlice write refused because its namespace is being deleted was
// logged as a failed reconcile (error). It is a race with the deletion: dropped at debug.
const terminating = (): ApiException<unknown> =>
  new ApiException(
    403,
    'Forbidden',
    {
      kind: 'Status',
      reason: 'Forbidden',
      message:
        'endpointslices.discovery.k8s.io "x" is forbidden: unable to create new content in namespace shop because it is being terminated',
      details: { causes: [{ reason: 'NamespaceTerminating' }] },
    },
    {},
  );

describe('writes into a terminating namespace', () => {
  it('the writer turns the 403 into NamespaceTerminatingError and leaves other errors alone', () => {
    expect(() => translateWriteError(terminating(), 'apply x')).toThrow(NamespaceTerminatingError);
    const forbidden = new ApiException(403, 'Forbidden', { reason: 'Forbidden' }, {});
    expect(() => translateWriteError(forbidden, 'apply x')).toThrow(forbidden);
  });

  it('the reconcile ends quietly with a debug line, not an error', async () => {
    const cluster = createFakeCluster();
    const snapshot = staticSnapshot();
    snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', endpoints(2, 1))]);
    const logger = createMemoryLogger();
    const reconcile = reconcilerFor(cluster, snapshot, { logger });
    // ServiceImport and Service go through; the slice is refused.
    await reconcile('shop/cart');
    cluster.slices.clear();
    cluster.failNextWrites(1, () => new NamespaceTerminatingError('apply EndpointSlice'));
    await expect(reconcile('shop/cart')).resolves.toBeUndefined();
    expect(logger.entries.filter((e) => e.level === 'error' || e.level === 'warn')).toEqual([]);
    expect(logger.find('write dropped: namespace terminating')).toHaveLength(1);
  });

  it('any other write error still fails the reconcile', async () => {
    const cluster = createFakeCluster();
    const snapshot = staticSnapshot();
    snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', endpoints(2, 1))]);
    cluster.failNextWrites(1, 'boom');
    await expect(reconcilerFor(cluster, snapshot)('shop/cart')).rejects.toThrow('boom');
  });
});
