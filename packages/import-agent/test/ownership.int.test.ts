// Issue 11 item 2 "Done when": a user's pre-existing Service whose name is the derived name of
// a later import is never modified or deleted (real kube-apiserver, the import agent as a real
// process, records written into the Cloud Map emulator), and the import says why it is blocked.
import {
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Service,
} from '@kubernetes/client-node';
import { derivedServiceName, type ClusterExport, type Endpoint } from '@cloudmap-mcs/core';
import { waitFor, type TestNamespace } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { props } from './cloudmap-fixtures.js';
import { AgentProcess, Publisher, testCloudMap } from './int-helpers.js';

const CLUSTERSET = 'e2e-clusterset';
let cluster: E2eCluster;
let ns: TestNamespace;
let publisher: Publisher;
let agent: AgentProcess;

const eps = (n: number): Endpoint[] =>
  Array.from({ length: n }, (_, i) => ({
    address: `10.1.0.${String(i + 1)}`,
    addressType: 'IPv4' as const,
    ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
    conditions: { ready: true, serving: true, terminating: false },
  }));
const exp = (namespace: string, name: string): ClusterExport => ({
  namespace,
  name,
  cluster: { clusterId: 'c1', clustersetId: CLUSTERSET },
  properties: props(),
  endpoints: eps(2),
  hasExportRecord: true,
});

interface SI {
  metadata: { uid: string; labels?: Record<string, string> };
  spec: { ips?: string[] };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}
async function serviceImport(kc: KubeConfig, namespace: string, name: string) {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace,
      plural: 'serviceimports',
      name,
    })) as SI;
  } catch {
    return undefined;
  }
}
const ready = (si: SI | undefined) => si?.status?.conditions?.find((c) => c.type === 'Ready');
async function readService(kc: KubeConfig, namespace: string, name: string) {
  try {
    return await kc.makeApiClient(CoreV1Api).readNamespacedService({ namespace, name });
  } catch {
    return undefined;
  }
}
/** Everything a takeover would change: labels, owner references, spec, managed fields. */
const fingerprint = (s: V1Service | undefined) =>
  JSON.stringify({
    uid: s?.metadata?.uid,
    resourceVersion: s?.metadata?.resourceVersion,
    labels: s?.metadata?.labels,
    annotations: s?.metadata?.annotations,
    ownerReferences: s?.metadata?.ownerReferences,
    managedFields: s?.metadata?.managedFields?.map((f) => [f.manager, f.operation]),
    spec: s?.spec,
  });

beforeAll(async () => {
  const ctx = e2eContext();
  cluster = e2eClusters()[1]!;
  const env = ctx.cloudMapEnv;
  if (env === null) throw new Error('this suite needs the Cloud Map emulator (MCS_E2E_EMULATOR)');
  publisher = new Publisher(testCloudMap(env));
  ns = await e2eNamespace('own');
  agent = new AgentProcess(
    `import-own-${cluster.name}`,
    ['--leader-elect=false', '--poll-fast-seconds', '1'],
    {
      ...env,
      KUBECONFIG: cluster.kubeconfigPath,
      MCS_TEST_TIMINGS: JSON.stringify({ pollSlowSeconds: 2 }),
    },
  );
  await agent.start();
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  await ns?.delete({ wait: false });
});

describe('a user Service holding the derived name', () => {
  it('is never modified or deleted; the import is blocked and says why; it converges once the user removes theirs', async () => {
    const kc = cluster.kc;
    const core = kc.makeApiClient(CoreV1Api);
    const name = 'legacy';
    const derived = derivedServiceName(ns.name, name);
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: derived, labels: { app: 'legacy', team: 'payments' } },
        spec: {
          selector: { app: 'legacy' },
          ports: [{ name: 'web', port: 8000, targetPort: 8000 }],
        },
      },
    });
    const before = fingerprint(await readService(kc, ns.name, derived));

    await publisher.publish(exp(ns.name, name));
    const blocked = await waitFor('import blocked by the name collision', async () => {
      const si = await serviceImport(kc, ns.name, name);
      return ready(si)?.reason === 'NameCollision' ? si : undefined;
    });
    expect(ready(blocked)?.status).toBe('False');
    expect(ready(blocked)?.message).toContain(`Service ${ns.name}/${derived} exists`);
    expect(blocked.spec.ips).toBeUndefined();
    // A re-check (every 10 s) has happened too, and still nothing changed.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(fingerprint(await readService(kc, ns.name, derived))).toBe(before);
    const events = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns.name });
    const collisionEvents = events.items.filter((e) => e.reason === 'NameCollision');
    expect(
      collisionEvents.map((e) => `${e.regarding?.kind ?? ''}/${e.regarding?.name ?? ''}`).sort(),
    ).toEqual([`Service/${derived}`, `ServiceImport/${name}`].sort());
    expect(collisionEvents.every((e) => e.type === 'Warning')).toBe(true);
    // With the uid, so `kubectl describe service` shows it.
    expect(collisionEvents.find((e) => e.regarding?.kind === 'Service')?.regarding?.uid).toBe(
      (await readService(kc, ns.name, derived))?.metadata?.uid,
    );
    expect(await agent.metric('mcs_import_name_collisions', `name="${name}"`)).toBe(1);

    // Unexport: our ServiceImport goes, the user's Service stays as it was.
    await publisher.unpublish(ns.name, name, 'c1');
    await waitFor(
      'import removed',
      async () => (await serviceImport(kc, ns.name, name)) === undefined,
    );
    expect(fingerprint(await readService(kc, ns.name, derived))).toBe(before);
    expect(await agent.metric('mcs_import_name_collisions', `name="${name}"`)).toBe(0);

    // Exported again, then the user deletes theirs: the import proceeds by itself.
    await publisher.publish(exp(ns.name, name));
    await waitFor(
      'blocked again',
      async () => ready(await serviceImport(kc, ns.name, name))?.reason === 'NameCollision',
    );
    expect(fingerprint(await readService(kc, ns.name, derived))).toBe(before);
    await core.deleteNamespacedService({ namespace: ns.name, name: derived });
    const converged = await waitFor(
      'import converged',
      async () => {
        const si = await serviceImport(kc, ns.name, name);
        return ready(si)?.status === 'True' && (si?.spec.ips?.length ?? 0) === 1 ? si : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const ours = await readService(kc, ns.name, derived);
    expect(ours?.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe(
      'cloudmap-mcs-import-agent',
    );
    expect(ours?.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid])).toEqual([
      ['ServiceImport', name, converged.metadata.uid],
    ]);
    expect(ours?.spec?.selector).toBeUndefined();
    expect(converged.spec.ips).toEqual(ours?.spec?.clusterIPs);
  });
});

describe('a user ServiceImport holding the imported name', () => {
  it('is left alone (status included) and reported, until its owner hands it over with our label', async () => {
    const kc = cluster.kc;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const name = 'handover';
    const ref = {
      group: 'multicluster.x-k8s.io',
      version: 'v1beta1',
      namespace: ns.name,
      plural: 'serviceimports',
    };
    await custom.createNamespacedCustomObject({
      ...ref,
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceImport',
        metadata: { name, labels: { origin: 'previous-controller' } },
        spec: { type: 'ClusterSetIP', ports: [{ protocol: 'TCP', port: 81 }], ips: ['10.9.9.9'] },
      },
    });
    const theirs = (await serviceImport(kc, ns.name, name)) as SI & {
      metadata: { resourceVersion: string };
    };
    await publisher.publish(exp(ns.name, name));
    const event = await waitFor('NameCollision Event on the ServiceImport', async () => {
      const events = await kc
        .makeApiClient(EventsV1Api)
        .listNamespacedEvent({ namespace: ns.name });
      return events.items.find((e) => e.reason === 'NameCollision' && e.regarding?.name === name);
    });
    expect(event.regarding?.kind).toBe('ServiceImport');
    expect(event.regarding?.uid).toBe(theirs.metadata.uid);
    await new Promise((r) => setTimeout(r, 3_000));
    const still = (await serviceImport(kc, ns.name, name)) as typeof theirs;
    expect(still.metadata.resourceVersion).toBe(theirs.metadata.resourceVersion);
    expect(still.status).toBeUndefined();
    expect(await readService(kc, ns.name, derivedServiceName(ns.name, name))).toBeUndefined();

    // The owner's consent: our label. The import proceeds on the same object.
    await custom.patchNamespacedCustomObject(
      {
        ...ref,
        name,
        body: {
          metadata: { labels: { 'app.kubernetes.io/managed-by': 'cloudmap-mcs-import-agent' } },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const adopted = await waitFor('handed-over import ready', async () => {
      const si = await serviceImport(kc, ns.name, name);
      return ready(si)?.status === 'True' ? si : undefined;
    });
    expect(adopted.metadata.uid).toBe(theirs.metadata.uid);
    const derived = await readService(kc, ns.name, derivedServiceName(ns.name, name));
    expect(adopted.spec.ips).toEqual(derived?.spec?.clusterIPs);
  });
});
