import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { waitFor } from '@cloudmap-mcs/e2e';
import { e2eClusters, e2eContext, e2eNamespace } from '@cloudmap-mcs/e2e/vitest';
import { Attr, type CloudMapPort, type CloudMapInstance } from '@cloudmap-mcs/core';
import { startAgentProcess, type AgentProcess } from './int/agent-process.js';
import { cloudMapReader, instancesOf } from './int/cloudmap-reader.js';

// Issue 17 item 1 done-when: pod labels → endpoint attributes (add, change, remove, over-limit)
// against a real kube-apiserver and the Cloud Map emulator, the agent as a real process.
const c1 = e2eClusters()[0]!;
const ctx = e2eContext();
const env: Record<string, string> =
  ctx.cloudMapEnv === null
    ? Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => e[0].startsWith('AWS_') && e[1] !== undefined,
        ),
      )
    : { ...ctx.cloudMapEnv };
const SE = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceexports' };
const ANNOTATION = 'cloudmap-mcs.io/pod-label-attributes';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const core = c1.kc.makeApiClient(CoreV1Api);
const discovery = c1.kc.makeApiClient(DiscoveryV1Api);
const custom = c1.kc.makeApiClient(CustomObjectsApi);

let ns: string;
let deleteNs: () => Promise<void>;
let reader: CloudMapPort;
let agent: AgentProcess | undefined;

const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
  waitFor(what, probe, { timeoutMs: 60_000, intervalMs: 250 });

/** A pod that is never scheduled (a scheduling gate): only its labels matter here. */
async function createPod(name: string, labels: Record<string, string>) {
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns, labels },
      spec: {
        schedulingGates: [{ name: 'cloudmap-mcs.io/test-hold' }],
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
      },
    },
  });
}
const setPodLabels = (name: string, labels: Record<string, string | null>) =>
  core.patchNamespacedPod({ namespace: ns, name, body: { metadata: { labels } } }, merge);

const endpoints = async (): Promise<CloudMapInstance[]> =>
  (await instancesOf(reader, ns, 'cart', {})).filter(
    (i) => i.attributes[Attr.Record] === 'endpoint',
  );
/** `ip=version` of the endpoint instances (`-` when the attribute is absent). */
const versions = async () =>
  (await endpoints())
    .map((i) => `${i.attributes[Attr.Ipv4]}=${i.attributes['POD_LABEL_version'] ?? '-'}`)
    .sort()
    .join(' ');
const ready = async () =>
  (
    (await custom.getNamespacedCustomObject({ ...SE, namespace: ns, name: 'cart' })) as {
      status?: { conditions?: { type: string; reason: string; message: string }[] };
    }
  ).status?.conditions?.find((c) => c.type === 'Ready');

/** RegisterInstance calls the agent made so far (its `mcs_cloudmap_calls_total`). */
/**
 * RegisterInstance calls for the service's records: every RegisterInstance the agent made,
 * less the writes of its change feed instance (ADR 0018), which announce each change too.
 */
async function registerCalls(a: AgentProcess): Promise<number> {
  const text = await a.metrics();
  const sum = (re: RegExp): number => {
    let n = 0;
    for (const m of text.matchAll(re)) n += Number(m[1]);
    return n;
  };
  return (
    sum(/^mcs_cloudmap_calls_total\{[^}]*operation="registerInstance"[^}]*\} (\d+)/gm) -
    sum(/^mcs_export_feed_writes_total\{[^}]*\} (\d+)/gm) -
    // Heartbeats too: this cluster's other exports (other suites' leftovers in c1) may move them.
    sum(/^mcs_export_heartbeat_renewals_total\{[^}]*result="success"[^}]*\} (\d+)/gm)
  );
}

describe('pod label attributes (agent process + emulator)', () => {
  beforeAll(async () => {
    const created = await e2eNamespace('podattrs', [c1]);
    ns = created.name;
    deleteNs = () => created.delete();
    reader = cloudMapReader(env);
  });

  afterAll(async () => {
    await agent?.stop();
    await custom
      .patchNamespacedCustomObject(
        { ...SE, namespace: ns, name: 'cart', body: { metadata: { finalizers: null } } },
        merge,
      )
      .catch(() => undefined);
    await deleteNs?.();
  });

  it('adds, changes and removes label attributes; an over-limit key set gives a condition and an Event and keeps the records', async () => {
    await createPod('cart-1', { app: 'cart', version: 'red' });
    await createPod('cart-2', { app: 'cart', version: 'blue' });
    await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'cart', namespace: ns },
        spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: {
        metadata: {
          name: 'cart-manual',
          namespace: ns,
          labels: {
            'kubernetes.io/service-name': 'cart',
            'endpointslice.kubernetes.io/managed-by': 'e2e',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        endpoints: ['cart-1', 'cart-2'].map((pod, i) => ({
          addresses: [`10.1.0.${20 + i}`],
          conditions: { ready: true },
          targetRef: { kind: 'Pod', namespace: ns, name: pod },
        })),
      },
    });
    await custom.createNamespacedCustomObject({
      ...SE,
      namespace: ns,
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'cart', namespace: ns, annotations: { [ANNOTATION]: 'version' } },
      },
    });
    agent = startAgentProcess(c1.kubeconfigPath, env);

    // Add: the labels are there from the first write.
    await until(
      'labels exported',
      async () => (await versions()) === '10.1.0.20=red 10.1.0.21=blue',
    );
    // Change and remove a label: one RegisterInstance each (one pod, one port), once settled.
    await until('Ready=True', async () => (await ready())?.reason === 'Exported');
    const before = await registerCalls(agent);
    await setPodLabels('cart-1', { version: 'green' });
    await until(
      'label change',
      async () => (await versions()) === '10.1.0.20=green 10.1.0.21=blue',
    );
    await setPodLabels('cart-2', { version: null });
    await until('label removal', async () => (await versions()) === '10.1.0.20=green 10.1.0.21=-');
    await new Promise((r) => setTimeout(r, 2_500)); // a resync (2 s) must not write again
    const written = (await registerCalls(agent)) - before;
    console.log(`pod label attributes: ${written} RegisterInstance calls for 2 label changes`);
    expect(written).toBe(2);

    // Over-limit: 10 keys where 9 fit. Refused with a condition and an Event; records stay.
    // The pod carries all 10 labels, so a truncated key set would show on its record.
    const keys = Array.from({ length: 10 }, (_, i) => `l${i}`).join(',');
    await setPodLabels(
      'cart-1',
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`l${i}`, `v${i}`])),
    );
    await custom.patchNamespacedCustomObject(
      {
        ...SE,
        namespace: ns,
        name: 'cart',
        body: { metadata: { annotations: { [ANNOTATION]: keys } } },
      },
      merge,
    );
    const failed = await until('Ready=False/Failed', async () => {
      const r = await ready();
      return r?.reason === 'Failed' ? r : undefined;
    });
    expect(failed.message).toMatch(
      /10 pod label attributes requested; an endpoint instance has room for 9/,
    );
    const event = await until('ExportFailed Event', async () =>
      (
        await core.listNamespacedEvent({
          namespace: ns,
          fieldSelector: 'involvedObject.name=cart',
        })
      ).items.find((e) => e.reason === 'ExportFailed'),
    );
    expect(event.type).toBe('Warning');
    expect(event.message).toMatch(/pod label attributes/);
    expect(await versions()).toBe('10.1.0.20=green 10.1.0.21=-');
    // Never truncated: no record carries any of the refused keys.
    const labelKeys = (await endpoints()).flatMap((i) =>
      Object.keys(i.attributes).filter((k) => k.startsWith('POD_LABEL_l')),
    );
    expect(labelKeys).toEqual([]);

    // A key set that fits again is honoured: Ready=True and the labels on the records.
    await custom.patchNamespacedCustomObject(
      {
        ...SE,
        namespace: ns,
        name: 'cart',
        body: { metadata: { annotations: { [ANNOTATION]: 'version,l0' } } },
      },
      merge,
    );
    await until('Ready=True after the fix', async () => (await ready())?.reason === 'Exported');
    await until('l0 exported', async () =>
      (await endpoints()).some((i) => i.attributes['POD_LABEL_l0'] === 'v0'),
    );
    expect(await versions()).toBe('10.1.0.20=green 10.1.0.21=-');
  });
});
