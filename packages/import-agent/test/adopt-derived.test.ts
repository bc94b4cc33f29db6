// Issue 35: a migrating cluster keeps its clusterset IP. The AWS controller's ServiceImport
// and its derived Service `imported-<hash>` are handed over in place (the user labels both
// and names the Service in the ServiceImport's derived-service annotation): the import
// agent then writes that Service, its ClusterIP stays the clusterset IP, and its slices go
// under it. Without the annotation, or without the label on the Service, nothing changes.
import { derivedServiceName } from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_DERIVED_SERVICE,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  type ServiceImportObject,
  type ServiceObject,
} from '../src/reconcile/k8s-types.js';
import { derivedNameOf } from '../src/reconcile/ownership.js';
import { endpoints, exportOf } from './cloudmap-fixtures.js';
import { createFakeCluster } from './fake-cluster.js';
import { reconcilerFor, staticSnapshot } from './reconciler-fixture.js';

const ours = { [LABEL_MANAGED_BY]: MANAGED_BY };
const standard = derivedServiceName('shop', 'cart');

/** The controller's ServiceImport, as the user hands it over (or not). */
function controllerImport(labels: Record<string, string>, derived?: string): ServiceImportObject {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: {
      name: 'cart',
      namespace: 'shop',
      uid: 'si-uid',
      resourceVersion: '3',
      labels,
      annotations: {
        'multicluster.k8s.aws/derived-service':
          '[{"cluster":"c1","derived-service":"imported-abc"}]',
        ...(derived === undefined ? {} : { [ANNOTATION_DERIVED_SERVICE]: derived }),
      },
    },
    spec: { type: 'ClusterSetIP', ports: [{ protocol: 'TCP', port: 80 }], ips: ['10.96.7.7'] },
  };
}

/** The controller's derived Service (owner reference through v1alpha1), maybe labelled. */
function controllerService(labels: Record<string, string>): ServiceObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'imported-abc',
      namespace: 'shop',
      uid: 'svc-uid',
      resourceVersion: '4',
      labels: {
        'multicluster.kubernetes.io/source-cluster': 'c1',
        'multicluster.kubernetes.io/service-name': 'cart',
        ...labels,
      },
      ownerReferences: [
        {
          apiVersion: 'multicluster.x-k8s.io/v1alpha1',
          kind: 'ServiceImport',
          name: 'cart',
          uid: 'si-uid',
          controller: true,
        },
      ],
    },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.7.7',
      clusterIPs: ['10.96.7.7'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ protocol: 'TCP', port: 80, targetPort: 80 }],
    },
  };
}

function setup(si: ServiceImportObject, svc: ServiceObject) {
  const cluster = createFakeCluster();
  cluster.imports.set('shop/cart', si);
  cluster.services.set('shop/imported-abc', svc);
  const snapshot = staticSnapshot();
  snapshot.set('shop', 'cart', [exportOf('c1', 'shop', 'cart', endpoints(2, 1))]);
  return { cluster, reconcile: reconcilerFor(cluster, snapshot) };
}

describe('derivedNameOf', () => {
  it('names the standard Service unless our ServiceImport names another', () => {
    const meta = (labels: Record<string, string>, annotations: Record<string, string>) => ({
      metadata: { name: 'cart', namespace: 'shop', labels, annotations },
    });
    expect(derivedNameOf(undefined, 'shop', 'cart')).toEqual({
      derivedName: standard,
      adopted: false,
    });
    expect(
      derivedNameOf(meta({}, { [ANNOTATION_DERIVED_SERVICE]: 'imported-abc' }), 'shop', 'cart'),
    ).toEqual({ derivedName: standard, adopted: false });
    expect(
      derivedNameOf(meta(ours, { [ANNOTATION_DERIVED_SERVICE]: 'imported-abc' }), 'shop', 'cart'),
    ).toEqual({ derivedName: 'imported-abc', adopted: true });
    expect(
      derivedNameOf(meta(ours, { [ANNOTATION_DERIVED_SERVICE]: 'Not_A-Name' }), 'shop', 'cart'),
    ).toEqual({ derivedName: standard, adopted: false });
  });
});

describe('adopting the AWS controller’s derived Service', () => {
  it('keeps its ClusterIP as the clusterset IP and puts our slices under it', async () => {
    const { cluster, reconcile } = setup(
      controllerImport(ours, 'imported-abc'),
      controllerService(ours),
    );
    await reconcile('shop/cart');
    expect(cluster.services.has(`shop/${standard}`)).toBe(false);
    const svc = cluster.services.get('shop/imported-abc');
    expect(svc?.spec.clusterIP).toBe('10.96.7.7');
    expect(svc?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'multicluster.x-k8s.io/v1beta1', uid: 'si-uid' }),
    ]);
    const si = cluster.imports.get('shop/cart');
    expect(si?.spec.ips).toEqual(['10.96.7.7']);
    expect(si?.metadata.annotations?.[ANNOTATION_DERIVED_SERVICE]).toBe('imported-abc');
    const slices = [...cluster.slices.values()];
    expect(slices.map((s) => s.metadata.name)).toEqual([
      expect.stringMatching(/^imported-abc-[a-z0-9]{8}-0$/),
    ]);
    expect(slices[0]?.metadata.labels?.['kubernetes.io/service-name']).toBe('imported-abc');
    // Converged: a second pass writes nothing.
    const writes = cluster.writes;
    await reconcile('shop/cart');
    expect(cluster.writes).toBe(writes);
  });

  it('leaves an unlabelled Service alone (the import reports the collision)', async () => {
    const theirs = controllerService({});
    const { cluster, reconcile } = setup(controllerImport(ours, 'imported-abc'), theirs);
    await reconcile('shop/cart');
    expect(cluster.services.get('shop/imported-abc')).toEqual(theirs);
    expect(
      cluster.imports.get('shop/cart')?.status?.conditions?.find((c) => c.type === 'Ready'),
    ).toMatchObject({ status: 'False', reason: 'NameCollision' });
  });

  it('does not read the annotation of a ServiceImport that is not ours', async () => {
    const si = controllerImport({}, 'imported-abc');
    const { cluster, reconcile } = setup(si, controllerService(ours));
    await reconcile('shop/cart');
    expect(cluster.imports.get('shop/cart')).toEqual(si);
    expect(cluster.writes).toBe(0);
  });
});
