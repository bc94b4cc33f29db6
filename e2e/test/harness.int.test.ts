// The harness itself: a detached clusterset (as `make clusterset-up` starts it) with
// overlapping pod CIDRs, its identity objects, and a teardown that leaves nothing behind.
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  dumpYaml,
  loadAllYaml,
  type V1CustomResourceDefinition,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  clusterIdProperty,
  clustersetProperty,
  installCrds,
  isPortFree,
  isRunning,
  loadClusterset,
  loadKubeconfig,
  startClusterset,
  stopClusterset,
  waitFor,
  type Clusterset,
  type ProcessRecord,
} from '../src/index.js';
import { httpGet } from '../src/http.js';
import { crdDir } from '../src/paths.js';
import { servedResources, statusOf } from '../src/resources.js';
import { findPidFiles, readPidFile } from '../src/processes.js';
import '../src/vitest/context.js';

/** Pids of live processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(needle) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

describe('harness lifecycle', () => {
  let stateDir: string;
  let clusterset: Clusterset;
  let records: ProcessRecord[];
  let firstLists: string[];

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-e2e-harness-'));
    clusterset = await startClusterset({
      stateDir,
      clusters: 2,
      overlapPodCidrs: true,
      clustersetName: 'harness-test',
      emulator: 'required',
      detached: true,
    });
    // First thing after `up` returns, before anything else can give the API server time.
    firstLists = await listCrdResources(clusterset, 5);
    records = findPidFiles(stateDir)
      .map(readPidFile)
      .filter((r): r is ProcessRecord => r !== undefined);
  });

  afterAll(async () => {
    await stopClusterset(stateDir);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('writes one admin kubeconfig per cluster and a clusterset.json', () => {
    expect(existsSync(join(stateDir, 'c1.kubeconfig'))).toBe(true);
    expect(existsSync(join(stateDir, 'c2.kubeconfig'))).toBe(true);
    const state = JSON.parse(readFileSync(join(stateDir, 'clusterset.json'), 'utf8')) as {
      clusters: { name: string }[];
    };
    expect(state.clusters.map((c) => c.name)).toEqual(['c1', 'c2']);
    expect(records.map((r) => r.name).sort()).toEqual(
      ['c1', 'c2']
        .flatMap((c) =>
          ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].map(
            (p) => `${c}/${p}`,
          ),
        )
        .concat('cloudmap-emulator')
        .sort(),
    );
  });

  it('answers lists of every CRD-backed resource (each served version) as soon as up returns', () => {
    // 2 clusters x 5 rounds x ((ServiceExport, ServiceImport, ClusterProperty) x 2 versions
    // + CloudMapServiceImport v1alpha1)
    expect(firstLists).toHaveLength(2 * 5 * (3 * 2 + 1));
    expect(firstLists.filter((r) => !r.endsWith(': ok'))).toEqual([]);
  });

  it('installCrds returns only once a cache-served list of each version of a new CRD answers', async () => {
    // A CRD nobody has requested yet: its storage and watch cache are built on the first
    // request, and a list at resourceVersion 0 right after Established used to get 429.
    const group = `probe${randomBytes(4).toString('hex')}.e2e.cloudmap-mcs.io`;
    const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-crd-'));
    const schema = {
      openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    };
    const crd: V1CustomResourceDefinition = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          { name: 'v1alpha1', served: true, storage: false, schema },
          { name: 'v1', served: true, storage: true, schema },
        ],
      },
    };
    writeFileSync(join(dir, 'widgets.yaml'), dumpYaml(crd));
    const kc = loadKubeconfig(clusterset.clusters[0]!.kubeconfig);
    try {
      await installCrds(kc, dir);
      const api = kc.makeApiClient(CustomObjectsApi);
      const results: string[] = [];
      for (const version of ['v1alpha1', 'v1', 'v1alpha1', 'v1']) {
        try {
          await api.listClusterCustomObject({
            group,
            version,
            plural: 'widgets',
            resourceVersion: '0',
          });
          results.push(`${version}: ok`);
        } catch (err) {
          results.push(`${version}: ${statusOf(err)}`);
        }
      }
      expect(results).toEqual(['v1alpha1: ok', 'v1: ok', 'v1alpha1: ok', 'v1: ok']);
    } finally {
      await kc
        .makeApiClient(ApiextensionsV1Api)
        .deleteCustomResourceDefinition({ name: `widgets.${group}` });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the Cloud Map emulator as a process and writes cloudmap.env for the AWS SDK', async () => {
    const env = Object.fromEntries(
      readFileSync(join(stateDir, 'cloudmap.env'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split('=', 2) as [string, string]),
    );
    expect(env).toEqual({
      AWS_ENDPOINT_URL_SERVICEDISCOVERY: clusterset.state.emulator?.url,
      CLOUDMAP_EMULATOR_DNS: `127.0.0.1:${clusterset.state.emulator?.dnsPort}`,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    const res = await fetch(env['AWS_ENDPOINT_URL_SERVICEDISCOVERY']!, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'Route53AutoNaming_v20170314.ListNamespaces',
      },
      body: '{}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ Namespaces: [] });
    // The DNS server answers too: nothing is in its zones yet, so a name is REFUSED.
    const resolver = new Resolver({ timeout: 2_000, tries: 1 });
    resolver.setServers([env['CLOUDMAP_EMULATOR_DNS']!]);
    await expect(resolver.resolve4('web.example.internal')).rejects.toMatchObject({
      code: 'EREFUSED',
    });
  });

  it('serves a version-stamped API on 127.0.0.1 with distinct service ranges and shared pod ranges', async () => {
    const [c1, c2] = clusterset.clusters;
    expect(new URL(c1!.server).hostname).toBe('127.0.0.1');
    expect(c1!.network.podCidr).toBe(c2!.network.podCidr);
    expect(c1!.network.serviceCidr).not.toBe(c2!.network.serviceCidr);
    const res = await fetchVersion(c1!.kubeconfig);
    expect(res.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(res.gitVersion).not.toContain('0.0.0');
  });

  it('creates the KEP-2149 ClusterProperties', async () => {
    for (const c of clusterset.clusters) {
      const api = loadKubeconfig(c.kubeconfig).makeApiClient(CustomObjectsApi);
      const get = async (name: string): Promise<string> =>
        (
          (await api.getClusterCustomObject({
            group: 'about.k8s.io',
            version: 'v1beta1',
            plural: 'clusterproperties',
            name,
          })) as {
            spec: { value: string };
          }
        ).spec.value;
      expect(await get(clusterIdProperty)).toBe(c.name);
      expect(await get(clustersetProperty)).toBe('harness-test');
    }
  });

  it('gives pods in both clusters addresses from the same (overlapping) pod CIDR', async () => {
    const ips: string[] = [];
    for (const c of clusterset.clusters) {
      const core = loadKubeconfig(c.kubeconfig).makeApiClient(CoreV1Api);
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'probe' },
          spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
        },
      });
      const pod = await waitFor<V1Pod>('probe pod Running with an IP', async () => {
        const p = await core.readNamespacedPod({ name: 'probe', namespace: 'default' });
        return p.status?.phase === 'Running' && p.status.podIP !== undefined ? p : undefined;
      });
      expect(pod.spec?.nodeName).toBe(`${c.name}-node-0`);
      expect(pod.status?.hostIP).toBe(c.network.nodeIps[0]);
      ips.push(pod.status?.podIP ?? '');
    }
    for (const ip of ips) expect(ip.startsWith('10.1.')).toBe(true);
  });

  it('runs beside the clusterset of this test run without sharing a port', async () => {
    const run = inject('mcsE2e');
    // With external clusters there is no second harness clusterset to compare with.
    const other = run.stateDir === null ? [] : loadClusterset(run.stateDir).clusters;
    const ours = clusterset.clusters.flatMap((c) => Object.values(c.ports));
    for (const c of other) {
      for (const port of Object.values(c.ports)) expect(ours).not.toContain(port);
      const res = await httpGet(`${c.server}/livez`, { insecure: true });
      expect(res.status).toBe(200);
    }
    expect(other.length).toBe(run.external ? 0 : run.kubeconfigs.length);
  });

  it('tears down: no harness process left and every port free', async () => {
    expect(records.every(isRunning)).toBe(true);
    const ports = [
      ...clusterset.clusters.flatMap((c) => Object.values(c.ports)),
      clusterset.state.emulator!.port,
      clusterset.state.emulator!.dnsPort!,
    ];
    expect(ports).toHaveLength(12);
    expect(new Set(ports).size).toBe(12);
    for (const port of ports) expect(await isPortFree(port)).toBe(false);

    const report = await stopClusterset(stateDir);
    expect(report).toEqual({ leftover: [], busyPorts: [], hostLeftovers: [] });
    expect(records.filter(isRunning)).toEqual([]);
    expect(processesMentioning(stateDir)).toEqual([]);
    for (const port of ports) expect(await isPortFree(port)).toBe(true);
    expect(findPidFiles(stateDir)).toEqual([]);
  });
});

async function fetchVersion(kubeconfig: string): Promise<{ gitVersion: string }> {
  const kc = loadKubeconfig(kubeconfig);
  const cluster = kc.getCurrentCluster()!;
  const res = await httpGet(`${cluster.server}/version`, {
    ca: Buffer.from(cluster.caData ?? '', 'base64').toString(),
    token: kc.getCurrentUser()?.token ?? '',
  });
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as { gitVersion: string };
}

/**
 * Lists every served version of every CRD-backed resource in each cluster, `rounds` times
 * back to back, and returns one "cluster group/version/plural: ok|<error>" line per list.
 */
async function listCrdResources(cs: Clusterset, rounds: number): Promise<string[]> {
  const crds = readdirSync(crdDir())
    .filter((f) => f.endsWith('.yaml'))
    .flatMap(
      (f) => loadAllYaml(readFileSync(join(crdDir(), f), 'utf8')) as V1CustomResourceDefinition[],
    );
  const resources = servedResources(crds);
  const lines: string[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const c of cs.clusters) {
      const api = loadKubeconfig(c.kubeconfig).makeApiClient(CustomObjectsApi);
      for (const r of resources) {
        const what = `${c.name} ${r.group}/${r.version}/${r.plural}`;
        try {
          // resourceVersion 0: served from the watch cache, as an informer's first list is.
          await api.listClusterCustomObject({ ...r, resourceVersion: '0' });
          lines.push(`${what}: ok`);
        } catch (err) {
          lines.push(`${what}: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`);
        }
      }
    }
  }
  return lines;
}
