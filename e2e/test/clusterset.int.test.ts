// The issue-3 acceptance suite. Runs on the run's clusters: harness clusters by default, or
// any clusters given through MCS_E2E_KUBECONFIGS (kind, EKS).
import { randomBytes } from 'node:crypto';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceAccountKubeconfig, statusOf, waitFor } from '../src/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { e2eClusters, e2eNamespace, type E2eCluster } from '../src/vitest/index.js';
import type { TestNamespace } from '../src/namespaces.js';

const mcs = { group: 'multicluster.x-k8s.io', plural: 'serviceexports' };
const about = { group: 'about.k8s.io', plural: 'clusterproperties' };

let clusters: E2eCluster[];
let c1: E2eCluster;
let ns: TestNamespace;

beforeAll(async () => {
  clusters = e2eClusters();
  expect(clusters.length).toBeGreaterThanOrEqual(2);
  c1 = clusters[0]!;
  ns = await e2eNamespace('clusterset');
});

afterAll(async () => {
  await ns?.delete({ wait: true });
});

const isReady = (p: V1Pod): boolean =>
  p.status?.phase === 'Running' &&
  (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('a Deployment and a Service in c1', () => {
  it('gets 2 Running pods with IPs and an EndpointSlice with 2 ready endpoints from the controller-manager', async () => {
    const apps = c1.kc.makeApiClient(AppsV1Api);
    const core = c1.kc.makeApiClient(CoreV1Api);
    const discovery = c1.kc.makeApiClient(DiscoveryV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: 'registry.k8s.io/pause:3.10',
                  ports: [{ containerPort: 8080 }],
                },
              ],
            },
          },
        },
      },
    });
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: {
          selector: labels,
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      },
    });

    const pods = await waitFor('2 Running and Ready pods', async () => {
      const list = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app=web' });
      const ready = list.items.filter(isReady);
      return ready.length === 2 && list.items.length === 2 ? ready : undefined;
    });
    const podIps = pods.map((p) => p.status?.podIP ?? '').sort();
    expect(podIps.every((ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip))).toBe(true);
    expect(new Set(podIps).size).toBe(2);

    const slice = await waitFor('an EndpointSlice with 2 ready endpoints', async () => {
      const list = await discovery.listNamespacedEndpointSlice({
        namespace: ns.name,
        labelSelector: 'kubernetes.io/service-name=web',
      });
      return list.items.find(
        (s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length === 2,
      );
    });
    expect(slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).toBe(
      'endpointslice-controller.k8s.io',
    );
    expect(slice.addressType).toBe('IPv4');
    expect((slice.endpoints ?? []).flatMap((e) => e.addresses).sort()).toEqual(podIps);
    expect(slice.ports).toEqual([
      expect.objectContaining({ name: 'http', port: 8080, protocol: 'TCP' }),
    ]);
  });
});

describe('MCS CRDs', () => {
  it('lists ServiceExports at v1alpha1 and v1beta1', async () => {
    const api = c1.kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      ...mcs,
      version: 'v1beta1',
      namespace: ns.name,
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'web' },
      },
    });
    for (const version of ['v1alpha1', 'v1beta1']) {
      const list = (await api.listNamespacedCustomObject({
        ...mcs,
        version,
        namespace: ns.name,
      })) as {
        apiVersion: string;
        items: { metadata: { name: string } }[];
      };
      expect(list.apiVersion).toBe(`multicluster.x-k8s.io/${version}`);
      expect(list.items.map((i) => i.metadata.name)).toEqual(['web']);
    }
  });

  it('accepts a ServiceImport as the AWS Go controller writes it: v1alpha1, one IP per cluster', async () => {
    // Three exporting clusters → three derived-Service ClusterIPs in spec.ips (issue 11: our
    // CRD's maxItems 2 refused it, breaking migration step 2).
    const api = c1.kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      ...mcs,
      version: 'v1alpha1',
      namespace: ns.name,
      plural: 'serviceimports',
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceImport',
        metadata: { name: 'three' },
        spec: {
          type: 'ClusterSetIP',
          ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
          ips: ['10.96.0.11', '10.96.0.12', '10.96.0.13'],
        },
      },
    });
    const stored = (await api.getNamespacedCustomObject({
      ...mcs,
      version: 'v1beta1',
      namespace: ns.name,
      plural: 'serviceimports',
      name: 'three',
    })) as { spec: { ips: string[] } };
    expect(stored.spec.ips).toHaveLength(3);
    // Updating it (as the Go controller does when a fourth cluster exports) is accepted too.
    await api.patchNamespacedCustomObject(
      {
        ...mcs,
        version: 'v1alpha1',
        namespace: ns.name,
        plural: 'serviceimports',
        name: 'three',
        body: [{ op: 'add', path: '/spec/ips/-', value: '10.96.0.14' }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
  });

  it('creates a ClusterProperty (about.k8s.io) and reads it at both versions', async () => {
    const api = c1.kc.makeApiClient(CustomObjectsApi);
    const name = `probe-${randomBytes(3).toString('hex')}.e2e.cloudmap-mcs.io`;
    await api.createClusterCustomObject({
      ...about,
      version: 'v1alpha1',
      body: {
        apiVersion: 'about.k8s.io/v1alpha1',
        kind: 'ClusterProperty',
        metadata: { name },
        spec: { value: 'v' },
      },
    });
    try {
      for (const version of ['v1alpha1', 'v1beta1']) {
        const obj = (await api.getClusterCustomObject({ ...about, version, name })) as {
          spec: { value: string };
        };
        expect(obj.spec.value).toBe('v');
      }
      await expect(
        api.createClusterCustomObject({
          ...about,
          version: 'v1beta1',
          body: {
            apiVersion: 'about.k8s.io/v1beta1',
            kind: 'ClusterProperty',
            metadata: { name: `empty-${name}` },
            spec: { value: '' },
          },
        }),
      ).rejects.toSatisfy((err: unknown) => statusOf(err) === 422);
    } finally {
      await api.deleteClusterCustomObject({ ...about, version: 'v1beta1', name });
    }
  });
});

describe('controllers', () => {
  it('garbage-collects a dependent when its owner is deleted', async () => {
    const core = c1.kc.makeApiClient(CoreV1Api);
    const owner = await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({
      name: 'owner',
      namespace: ns.name,
      propagationPolicy: 'Background',
    });
    await waitFor('dependent ConfigMap collected', async () => {
      try {
        await core.readNamespacedConfigMap({ name: 'dependent', namespace: ns.name });
        return false;
      } catch (err) {
        if (statusOf(err) === 404) return true;
        throw err;
      }
    });
  });

  it('mints ServiceAccount tokens that carry exactly the account RBAC', async () => {
    const core = c1.kc.makeApiClient(CoreV1Api);
    const rbac = c1.kc.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({
      namespace: ns.name,
      body: { metadata: { name: 'reader' } },
    });
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'configmap-reader' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns.name }],
      },
    });
    const kc = new KubeConfig();
    kc.loadFromString(
      await serviceAccountKubeconfig(c1.kc, { namespace: ns.name, serviceAccount: 'reader' }),
    );
    const asReader = kc.makeApiClient(CoreV1Api);
    await waitFor('RoleBinding effective', async () => {
      await asReader.listNamespacedConfigMap({ namespace: ns.name });
      return true;
    });
    await expect(asReader.listNamespacedSecret({ namespace: ns.name })).rejects.toSatisfy(
      (err: unknown) => statusOf(err) === 403,
    );
    await expect(asReader.listNamespacedConfigMap({ namespace: 'kube-system' })).rejects.toSatisfy(
      (err: unknown) => statusOf(err) === 403,
    );
  });
});
