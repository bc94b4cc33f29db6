// `cloudmap-mcs doctor` as a real process. The destructive case (a CRD and a ClusterProperty
// missing) runs on a cluster of its own, started here through the harness library, so the
// shared clusters of the run are never touched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  V1MicroTime,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  installCrds,
  loadKubeconfig,
  setClusterProperty,
  startClusterset,
  stderrProgress,
  waitFor,
  type Clusterset,
} from '@cloudmap-mcs/e2e';
import { e2eContext } from '@cloudmap-mcs/e2e/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../src/doctor/result.js';
import { runCli } from './helpers/run-cli.js';

const repoRoot = join(import.meta.dirname, '../../..');
const COREFILE = `.:53 {
    errors
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        multicluster clusterset.local
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
}
`;

let clusterset: Clusterset | undefined;
let stateDir: string;
let kubeconfig: string;
let env: Record<string, string>;

interface DoctorJson {
  context: string;
  ok: boolean;
  results: CheckResult[];
}

const doctor = async (...extra: string[]) =>
  runCli(['doctor', '--kubeconfig', kubeconfig, ...extra], env);
const bySubject = (results: CheckResult[], subject: string) =>
  results.find((r) => r.subject === subject);

beforeAll(async () => {
  const ctx = e2eContext();
  expect(ctx.cloudMapEnv, 'the run needs the Cloud Map emulator').not.toBeNull();
  env = { ...(ctx.cloudMapEnv ?? {}) };
  stateDir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-cli-doctor-'));
  clusterset = await startClusterset({
    stateDir,
    clusters: 1,
    emulator: 'off',
    clusterProperties: false,
    // Own session, stopped in afterAll by pid files. (Attached mode records this worker as the
    // clusterset's owner in owner.pid, which stopClusterset then signals as well.)
    detached: true,
    progress: (m) => stderrProgress(`doctor suite: ${m}`),
  });
  kubeconfig = clusterset.clusters[0]!.kubeconfig;
  const kc = loadKubeconfig(kubeconfig);
  // Only one of the two ClusterProperties, and no ServiceExport CRD.
  await setClusterProperty(kc, 'clusterset.k8s.io', 'cli-doctor');
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  await ext.deleteCustomResourceDefinition({ name: 'serviceexports.multicluster.x-k8s.io' });
  await waitFor('ServiceExport CRD gone', async () => {
    try {
      await ext.readCustomResourceDefinition({ name: 'serviceexports.multicluster.x-k8s.io' });
      return false;
    } catch {
      return true;
    }
  });
});

afterAll(async () => {
  const report = await clusterset?.stop();
  expect(report?.leftover ?? []).toEqual([]);
  if (report !== undefined && report.leftover.length === 0)
    rmSync(stateDir, { recursive: true, force: true });
});

describe('cloudmap-mcs doctor', () => {
  it('finds the missing CRD and ClusterProperty, says how to fix each, and exits 1', async () => {
    const { code, stdout } = await doctor();
    expect(code).toBe(1);
    const manifest = 'deploy/crds/multicluster.x-k8s.io_serviceexports.yaml';
    expect(stdout).toContain('[FAIL] CRD serviceexports.multicluster.x-k8s.io: not installed');
    expect(stdout).toContain(`fix: install it: kubectl apply --server-side -f ${manifest}`);
    expect(existsSync(join(repoRoot, manifest)), 'the fix names a file that exists').toBe(true);
    expect(stdout).toContain('[FAIL] ClusterProperty cluster.clusterset.k8s.io: missing');
    expect(stdout).toMatch(
      /fix: create it:\n\s+kubectl apply -f - <<'EOF'\n\s+apiVersion: about.k8s.io\/v1beta1\n\s+kind: ClusterProperty\n\s+metadata:\n\s+name: cluster.clusterset.k8s.io/,
    );
    expect(stdout).toContain('[ ok ] ClusterProperty clusterset.k8s.io: = cli-doctor');
    expect(stdout).toContain('[ ok ] CRD serviceimports.multicluster.x-k8s.io');
    expect(stdout).toContain(
      '[FAIL] CoreDNS clusterset.local: no Corefile found (no ConfigMap kube-system/coredns)',
    );
    expect(stdout).toMatch(/\d+ problems found/);
  });

  it('passes those checks once the fixes are applied', async () => {
    const kc = loadKubeconfig(kubeconfig);
    await installCrds(kc);
    await setClusterProperty(kc, 'cluster.clusterset.k8s.io', 'c9');
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: 'kube-system',
      body: { metadata: { name: 'coredns' }, data: { Corefile: COREFILE } },
    });
    const { code, stdout } = await doctor('-o', 'json');
    const report = JSON.parse(stdout) as DoctorJson;
    const notOk = report.results.filter((r) => r.status !== 'ok').map((r) => r.subject);
    // Nothing runs the agents on this cluster, so that check alone still fails.
    expect(notOk).toEqual(['agents']);
    expect(code).toBe(1);
    expect(bySubject(report.results, 'CRD serviceexports.multicluster.x-k8s.io')?.message).toBe(
      'served: v1alpha1, v1beta1',
    );
    expect(bySubject(report.results, 'ClusterProperty cluster.clusterset.k8s.io')?.message).toBe(
      '= c9',
    );
    expect(bySubject(report.results, 'CoreDNS clusterset.local')?.status).toBe('ok');
    expect(
      report.results.filter((r) => r.group === 'cloudmap').every((r) => r.status === 'ok'),
    ).toBe(true);
  });

  it('finds the agents of the chart as Deployments, ready or not, and then passes', async () => {
    const kc = loadKubeconfig(kubeconfig);
    await kc
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'cloudmap-mcs' } } });
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const agent of ['export-agent', 'import-agent']) {
      const file = join(repoRoot, 'deploy/kustomize', agent, `${agent}.yaml`);
      for (const o of loadAllYaml(readFileSync(file, 'utf8')) as (KubernetesObject | null)[])
        if (o !== null)
          await objects.patch(
            o,
            undefined,
            undefined,
            'cli-doctor-test',
            true,
            PatchStrategy.ServerSideApply,
          );
    }
    const apps = kc.makeApiClient(AppsV1Api);
    // kwok runs the pods (no container starts); the Deployments become ready.
    await waitFor(
      'agent Deployments ready',
      async () => {
        const list = await apps.listNamespacedDeployment({ namespace: 'cloudmap-mcs' });
        return (
          list.items.length === 2 && list.items.every((d) => (d.status?.readyReplicas ?? 0) >= 1)
        );
      },
      { timeoutMs: 120_000 },
    );
    // Ready replicas are not the agent: kwok runs no container, so nobody holds a Lease yet.
    const leaderless = await doctor();
    expect(leaderless.code).toBe(1);
    expect(leaderless.stdout).toContain(
      '[FAIL] export agent Deployment cloudmap-mcs/cloudmap-mcs-export-agent: no Lease cloudmap-mcs/cloudmap-mcs-export-agent: no replica leads',
    );
    // A leader per agent, as client-go leader election writes it (holder = the pod's name).
    const leaders: Record<string, string> = {};
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'cloudmap-mcs' });
    for (const agent of ['export-agent', 'import-agent']) {
      const pod = pods.items.find(
        (p) =>
          p.metadata?.name?.startsWith(`cloudmap-mcs-${agent}-`) === true &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      );
      leaders[agent] = pod?.metadata?.name ?? '';
      await kc.makeApiClient(CoordinationV1Api).createNamespacedLease({
        namespace: 'cloudmap-mcs',
        body: {
          metadata: { name: `cloudmap-mcs-${agent}` },
          spec: {
            holderIdentity: leaders[agent],
            // Nothing renews it here: a duration that outlasts the test.
            leaseDurationSeconds: 3600,
            renewTime: new V1MicroTime(),
          },
        },
      });
    }
    const passing = await doctor('-o', 'json');
    const report = JSON.parse(passing.stdout) as DoctorJson;
    expect(report.results.filter((r) => r.group === 'agents')).toMatchObject([
      { subject: 'export agent Deployment cloudmap-mcs/cloudmap-mcs-export-agent', status: 'ok' },
      { subject: 'import agent Deployment cloudmap-mcs/cloudmap-mcs-import-agent', status: 'ok' },
    ]);
    const agents = report.results.filter((r) => r.group === 'agents').map((r) => r.message);
    expect(agents[0]).toMatch(
      new RegExp(
        `^leader ${leaders['export-agent']} \\(Ready\\), Lease cloudmap-mcs/cloudmap-mcs-export-agent renewed \\d+s ago`,
      ),
    );
    expect(agents[1]).toContain(`leader ${leaders['import-agent']} (Ready)`);
    // No role is named by these manifests: doctor says it probes with the operator's credentials.
    expect(bySubject(report.results, 'Cloud Map identity (import agent)')?.message).toContain(
      'no role named',
    );
    expect(report.results.filter((r) => r.status !== 'ok')).toEqual([]);
    expect(passing.code).toBe(0);

    // gather through the real API: kwok pods have no logs or metrics (listed in errors.txt),
    // the rest is bundled, and a Secret of the agents' namespace is not.
    const secretValue = 'gather-must-never-see-this';
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: 'cloudmap-mcs',
      body: { metadata: { name: 'cli-gather-test' }, stringData: { token: secretValue } },
    });
    const bundle = join(stateDir, 'bundle.tar.gz');
    const gather = await runCli(['gather', '--kubeconfig', kubeconfig, '-f', bundle], env);
    expect(gather.code).toBe(0);
    expect(gather.stdout).toMatch(/^wrote .*bundle\.tar\.gz \(\d+ files/);
    const out = join(stateDir, 'bundle');
    execFileSync('mkdir', ['-p', out]);
    execFileSync('tar', ['-xzf', bundle, '-C', out]);
    const files = execFileSync('find', [out, '-type', 'f'], { encoding: 'utf8' }).split('\n');
    const text = files
      .filter((f) => f !== '')
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    expect(files.some((f) => f.endsWith('/doctor.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('/cloudmap-mcs-export-agent/deployment.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('/mcs/serviceimports.yaml'))).toBe(true);
    expect(text).toContain(`leader ${leaders['export-agent']} (Ready)`);
    expect(text).not.toContain(secretValue);

    const name = 'cloudmap-mcs-import-agent';
    const d = await apps.readNamespacedDeployment({ namespace: 'cloudmap-mcs', name });
    await apps.replaceNamespacedDeployment({
      namespace: 'cloudmap-mcs',
      name,
      body: { ...d, spec: { ...d.spec!, replicas: 0 } },
    });
    const scaledDown = await doctor();
    expect(scaledDown.code).toBe(1);
    expect(scaledDown.stdout).toContain(
      '[FAIL] import agent Deployment cloudmap-mcs/cloudmap-mcs-import-agent: scaled to 0 replicas',
    );
    expect(scaledDown.stdout).toContain(
      'fix: kubectl -n cloudmap-mcs scale deployment cloudmap-mcs-import-agent --replicas=1',
    );
  });

  it('reports an unreachable Cloud Map and a dead agent health endpoint', async () => {
    const { code, stdout } = await runCli(
      ['doctor', '--kubeconfig', kubeconfig, '--agents-url', 'http://127.0.0.1:9'],
      { ...env, AWS_ENDPOINT_URL_SERVICEDISCOVERY: 'http://127.0.0.1:9' },
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/\[FAIL\] Cloud Map: unreachable at http:\/\/127\.0\.0\.1:9/);
    expect(stdout).toMatch(/\[FAIL\] agent http:\/\/127\.0\.0\.1:9: not reachable/);
  });
});
