import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { waitFor } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace } from '@cloudmap-mcs/e2e/vitest';
import { Attr, ServiceExportApi } from '@cloudmap-mcs/core';
import { startAgentProcess, type AgentProcess } from './int/agent-process.js';
import { cloudMapReader, instancesOf } from './int/cloudmap-reader.js';

// Issue 13 / docs/architecture.md#configuration: identity comes from ClusterProperty in
// about.k8s.io v1alpha1 or v1beta1. Here the cluster serves v1alpha1 only (v1beta1 stays the
// storage version but is not served), and the export agent, given no --cluster-id/--clusterset-id,
// must still find its identity and export. The CRD is restored afterwards (suites run one file at a
// time).
const clusters = e2eClusters();
const ctx = e2eContext();
const env: Record<string, string> =
  ctx.cloudMapEnv === null
    ? Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => e[0].startsWith('AWS_') && e[1] !== undefined,
        ),
      )
    : { ...ctx.cloudMapEnv };
const CRD = 'clusterproperties.about.k8s.io';
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

describe('export agent on a cluster serving ClusterProperty v1alpha1 only', () => {
  const c1 = clusters[0]!;
  const ext = c1.kc.makeApiClient(ApiextensionsV1Api);
  const custom = c1.kc.makeApiClient(CustomObjectsApi);
  let ns: string;
  let deleteNs: () => Promise<void>;
  let agent: AgentProcess | undefined;
  let v1beta1Index = -1;

  const setServed = async (served: boolean) => {
    await ext.patchCustomResourceDefinition(
      {
        name: CRD,
        body: [
          { op: 'replace', path: `/spec/versions/${String(v1beta1Index)}/served`, value: served },
        ],
      },
      jsonPatch,
    );
    // Wait until the API server answers (or refuses) the version as configured.
    await waitFor(
      `ClusterProperty v1beta1 served=${String(served)}`,
      async () => {
        const answered = await custom
          .listClusterCustomObject({
            group: 'about.k8s.io',
            version: 'v1beta1',
            plural: 'clusterproperties',
          })
          .then(
            () => true,
            (e: unknown) => ((e as { code?: number }).code === 404 ? false : undefined),
          );
        return answered === served || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  };

  beforeAll(async () => {
    const crd = await ext.readCustomResourceDefinition({ name: CRD });
    v1beta1Index = crd.spec.versions.findIndex((v) => v.name === 'v1beta1');
    expect(crd.spec.versions.find((v) => v.name === 'v1alpha1')?.served).toBe(true);
    expect(v1beta1Index).toBeGreaterThanOrEqual(0);
    const created = await e2eNamespace('cp-v1alpha1');
    ns = created.name;
    deleteNs = () => created.delete();
    await setServed(false);
  });

  afterAll(async () => {
    await agent?.stop();
    if (v1beta1Index >= 0) await setServed(true);
    // The finalizer would keep the namespace while no agent runs.
    await custom
      .patchNamespacedCustomObject(
        {
          ...ServiceExportApi,
          namespace: ns,
          name: 'alpha',
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        },
        jsonPatch,
      )
      .catch(() => undefined);
    await deleteNs?.();
  });

  it('reads its identity through v1alpha1 and exports', async () => {
    const alpha = (await custom.getClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1alpha1',
      plural: 'clusterproperties',
      name: 'cluster.clusterset.k8s.io',
    })) as { spec: { value: string } };
    const setId = (
      (await custom.getClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        name: 'clusterset.k8s.io',
      })) as { spec: { value: string } }
    ).spec.value;
    const clusterId = alpha.spec.value;

    agent = startAgentProcess(c1.kubeconfigPath, env);
    await c1.kc.makeApiClient(CoreV1Api).createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'alpha', namespace: ns },
        spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
      },
    });
    await c1.kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: ns,
      body: {
        metadata: {
          name: 'alpha-manual',
          namespace: ns,
          labels: {
            'kubernetes.io/service-name': 'alpha',
            'endpointslice.kubernetes.io/managed-by': 'e2e',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        endpoints: [{ addresses: ['10.1.0.77'], conditions: { ready: true } }],
      },
    });
    await custom.createNamespacedCustomObject({
      ...ServiceExportApi,
      namespace: ns,
      body: {
        apiVersion: ServiceExportApi.apiVersion,
        kind: 'ServiceExport',
        metadata: { name: 'alpha', namespace: ns },
      },
    });

    const reader = cloudMapReader(env);
    const ips = await waitFor(
      'the endpoint in Cloud Map under the v1alpha1 identity',
      async () => {
        const found = (
          await instancesOf(reader, ns, 'alpha', {
            [Attr.ClusterId]: clusterId,
            [Attr.ClustersetId]: setId,
          })
        )
          .filter((i) => i.attributes[Attr.Record] === 'endpoint')
          .map((i) => i.attributes[Attr.Ipv4]);
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(ips).toEqual(['10.1.0.77']);
    const ready = await waitFor(
      'ServiceExport Ready=True',
      async () => {
        const se = (await custom.getNamespacedCustomObject({
          ...ServiceExportApi,
          namespace: ns,
          name: 'alpha',
        })) as { status?: { conditions?: { type: string; status: string }[] } };
        const c = se.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.status === 'True' ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(ready.status).toBe('True');
    expect(agent.logs.some((l) => l.includes('cluster identity') && l.includes(clusterId))).toBe(
      true,
    );
  });
});
