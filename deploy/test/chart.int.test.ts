// Every object the chart renders, in every mode, is accepted by a real API server of the
// harness (server-side apply, dry run, strict field validation), and helm's NOTES render
// against a live cluster. The Prometheus Operator CRDs (deploy/tools/monitoring-crds, from the
// Go module proxy) are installed first, so the ServiceMonitor, PodMonitor and PrometheusRule
// are validated against their real schemas.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { e2eClusters, e2eNamespace, type E2eCluster } from '@cloudmap-mcs/e2e/vitest';
import type { TestNamespace } from '@cloudmap-mcs/e2e';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chartDir,
  deployDir,
  helm,
  helmBinary,
  key,
  kustomizeBuild,
  modes,
  parseObjects,
  render,
  repoRoot,
  toolBinary,
} from './support/helm.js';
import { kubeRequest, ResourceMapper, serverSideApply } from './support/kube.js';

/** The modes, plus one with every optional feature switched on. */
const variants: Record<string, Record<string, unknown>> = {
  ...modes,
  'both, every option set': {
    cluster: { clusterId: 'dry-run-1', clusterSetId: 'dry-run-set', createClusterProperties: true },
    aws: {
      region: 'us-west-2',
      assumeRoleArn: 'arn:aws:iam::111122223333:role/cloudmap-mcs-registry',
      cloudMapEndpoint: 'http://127.0.0.1:4566',
    },
    logLevel: 'debug',
    imagePullSecrets: [{ name: 'regcred' }],
    commonLabels: { team: 'platform' },
    exportAgent: {
      image: { digest: `sha256:${'b'.repeat(64)}` },
      replicas: 3,
      podDisruptionBudget: { minAvailable: 2 },
      registerRate: 10,
      leaderElection: { leaseDurationSeconds: 30, renewDeadlineSeconds: 20, retryPeriodSeconds: 5 },
      serviceAccount: {
        annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/exp' },
      },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'mcs', effect: 'NoSchedule' }],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'export-agent' } },
        },
      ],
      podAnnotations: { 'example.com/a': 'b' },
      extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
    },
    metrics: {
      serviceMonitor: {
        enabled: true,
        labels: { release: 'kube-prometheus-stack' },
        interval: '15s',
        scrapeTimeout: '10s',
        relabelings: [{ action: 'replace', targetLabel: 'cluster', replacement: 'east' }],
        metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_.*' }],
      },
      podMonitor: {
        enabled: true,
        relabelings: [{ action: 'replace', targetLabel: 'cluster', replacement: 'east' }],
      },
      prometheusRule: {
        enabled: true,
        labels: { release: 'kube-prometheus-stack' },
        alertLabels: { team: 'platform' },
      },
      dashboard: { enabled: true, annotations: { grafana_folder: 'Kubernetes' } },
    },
    networkPolicy: {
      enabled: true,
      metricsFrom: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ],
      healthFrom: [{ ipBlock: { cidr: '10.0.0.0/16' } }],
    },
    importAgent: {
      replicas: 1,
      leaderElection: { enabled: false },
      podAntiAffinity: 'hard',
      priorityClassName: '',
      extraVolumes: [{ name: 'ca', configMap: { name: 'corporate-ca' } }],
      extraVolumeMounts: [{ name: 'ca', mountPath: '/etc/ca', readOnly: true }],
      envFrom: [{ configMapRef: { name: 'proxy-settings' } }],
      allowedCidrs: ['10.0.0.0/8'],
      requestBudget: 100,
      poll: { fastSeconds: 2 },
      // Test-only periods (docs/contributing.md#test-timings), as a user never sets them.
      extraEnv: [
        {
          name: 'MCS_TEST_TIMINGS',
          value: JSON.stringify({ pollSlowSeconds: 30, pollResyncSeconds: 300 }),
        },
      ],
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'import-agent' } },
              },
            },
          ],
        },
      },
      startupProbe: null,
    },
  },
};

let cluster: E2eCluster;
let kc: KubeConfig;
let ns: TestNamespace;
let mapper: ResourceMapper;

beforeAll(async () => {
  helmBinary();
  const clusters = e2eClusters();
  cluster = clusters[0] as E2eCluster;
  kc = cluster.kc;
  ns = await e2eNamespace('chart', [cluster]);
  // The restricted Pod Security Standard: a workload that violates it draws a warning, and
  // any warning fails the dry runs below.
  await kc.makeApiClient(CoreV1Api).patchNamespace(
    {
      name: ns.name,
      body: [
        {
          op: 'add',
          path: '/metadata/labels/pod-security.kubernetes.io~1enforce',
          value: 'restricted',
        },
        {
          op: 'add',
          path: '/metadata/labels/pod-security.kubernetes.io~1warn',
          value: 'restricted',
        },
      ],
    },
    // JSON patch
    { headers: { 'Content-Type': 'application/json-patch+json' } } as never,
  );
  mapper = new ResourceMapper(kc);
  await installMonitoringCrds();
});

afterAll(async () => {
  await ns.delete();
  for (const name of createdCrds)
    await kubeRequest(
      kc,
      'DELETE',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
});

/** CRDs this file created (deleted afterwards; ones that were there are left alone). */
const createdCrds: string[] = [];

async function installMonitoringCrds(): Promise<void> {
  const dir = execFileSync(join(deployDir, 'tools', 'monitoring-crds', 'crds.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const plurals = ['servicemonitors', 'podmonitors', 'prometheusrules'];
  for (const plural of plurals) {
    const name = `${plural}.monitoring.coreos.com`;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
    if ((await kubeRequest(kc, 'GET', crdPath)).status === 404) createdCrds.push(name);
    const [crd] = parseObjects(
      readFileSync(join(dir, `monitoring.coreos.com_${plural}.yaml`), 'utf8'),
    );
    const res = await serverSideApply(kc, mapper, crd as KubernetesObject, { dryRun: false });
    expect(res.status, res.body).toBeLessThan(300);
  }
  // Served once Established: discovery of monitoring.coreos.com/v1 lists all three.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await kubeRequest(kc, 'GET', '/apis/monitoring.coreos.com/v1');
    const served =
      res.status === 200
        ? (JSON.parse(res.body) as { resources: { name: string }[] }).resources.map((r) => r.name)
        : [];
    if (plurals.every((p) => served.includes(p))) return;
    if (Date.now() > deadline)
      throw new Error(`monitoring CRDs not served after 60 s: ${served.join(', ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Applies (dry run) every object; returns the ones the server refused or warned about. */
async function dryRunAll(objects: KubernetesObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const obj of objects) {
    const res = await serverSideApply(kc, mapper, obj, { dryRun: true });
    if (res.status < 200 || res.status >= 300)
      problems.push(`${key(obj)}: ${res.status} ${res.body}`);
    else if (res.warnings.length > 0)
      problems.push(`${key(obj)}: warnings ${res.warnings.join('; ')}`);
  }
  return problems;
}

/** Moves namespaced objects into the test namespace (dry runs cannot create namespaces). */
async function intoTestNamespace(
  objects: KubernetesObject[],
  keep: readonly string[] = [],
): Promise<KubernetesObject[]> {
  const out: KubernetesObject[] = [];
  for (const o of objects) {
    const info = await mapper.resolve(o.apiVersion ?? '', o.kind ?? '');
    const namespace = o.metadata?.namespace;
    if (info.namespaced && !(namespace !== undefined && keep.includes(namespace))) {
      out.push({ ...o, metadata: { ...o.metadata, namespace: ns.name } });
    } else {
      out.push(o);
    }
  }
  return out;
}

describe('chart on a harness API server', () => {
  it.each(Object.keys(variants))(
    '%s: every rendered object passes a server-side dry run',
    async (name) => {
      const out = render({ values: variants[name] ?? {}, namespace: ns.name, includeCrds: true });
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      const crds = out.objects.filter((o) => o.kind === 'CustomResourceDefinition');
      expect(crds).toHaveLength(4);
      expect(out.objects.length).toBeGreaterThanOrEqual(crds.length + 8);
      expect(await dryRunAll(out.objects)).toEqual([]);
      if (name === 'both, every option set') {
        const kinds = new Set(out.objects.map((o) => o.kind));
        for (const k of [
          'ServiceMonitor',
          'PodMonitor',
          'PrometheusRule',
          'NetworkPolicy',
          'ConfigMap',
        ])
          expect(kinds, k).toContain(k);
      }
      console.info(
        `deploy: ${name}: ${out.objects.length} objects accepted by ${cluster.name} (dry run)`,
      );
    },
  );

  it('refuses what the server would refuse (the dry run is not a no-op)', async () => {
    const out = render({ values: modes.both, namespace: ns.name });
    const deployment = out.objects.find((o) => o.kind === 'Deployment') as KubernetesObject & {
      spec: { template: { spec: Record<string, unknown> } };
    };
    const broken = structuredClone(deployment);
    broken.spec.template.spec['serviceAccountNmae'] = 'typo';
    const problems = await dryRunAll([broken]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('serviceAccountNmae');
    // ... and the namespace enforces the restricted Pod Security Standard on the templates.
    const loose = structuredClone(deployment) as KubernetesObject & {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    delete loose.spec.template.spec.containers[0]?.['securityContext'];
    const psa = await dryRunAll([loose]);
    expect(psa).toHaveLength(1);
    expect(psa[0]).toMatch(/would violate PodSecurity .*restricted.*allowPrivilegeEscalation/);
    // ... and the monitoring objects meet the Prometheus Operator's schemas.
    const monitored = render({
      values: { ...modes.both, metrics: { serviceMonitor: { enabled: true } } },
      namespace: ns.name,
    });
    const monitor = structuredClone(
      monitored.objects.find((o) => o.kind === 'ServiceMonitor'),
    ) as KubernetesObject & { spec: { endpoints: Record<string, unknown>[] } };
    (monitor.spec.endpoints[0] as Record<string, unknown>)['interval'] = 'soon';
    const invalid = await dryRunAll([monitor]);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toContain('interval');
  });

  it('installs (server dry run) and prints NOTES that say what to check next', () => {
    const res = helm([
      'install',
      'mcs',
      chartDir,
      '--dry-run=server',
      '--kubeconfig',
      cluster.kubeconfigPath,
      '--namespace',
      ns.name,
      '--set',
      'importAgent.enabled=false',
    ]);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('export agent  mcs-cloudmap-mcs-export-agent');
    expect(res.stdout).toContain('import agent  disabled');
    expect(res.stdout).toContain('kubectl get clusterproperties.about.k8s.io');
  });
});

describe('kustomize and samples on a harness API server', () => {
  it('overlay both: every object passes a server-side dry run', async () => {
    toolBinary('kustomize');
    const res = kustomizeBuild(join(deployDir, 'kustomize', 'overlays', 'both'));
    expect(res.status, res.stderr).toBe(0);
    const objects = await intoTestNamespace(parseObjects(res.stdout));
    expect(objects.length).toBeGreaterThanOrEqual(3 + 2 + 1 + 16);
    expect(await dryRunAll(objects)).toEqual([]);
    console.info(`deploy: kustomize overlay both: ${objects.length} objects accepted (dry run)`);
  });

  it('samples: every object passes a server-side dry run', async () => {
    const dir = join(repoRoot, 'samples');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.yaml') && statSync(join(dir, f)).isFile())
      .sort();
    expect(files).toEqual([
      'cluster-properties.yaml',
      'coredns/coredns-rbac.yaml',
      'coredns/corefile-configmap.yaml',
      'demo/demo.yaml',
      'headless/headless.yaml',
    ]);
    const objects = await intoTestNamespace(
      files.flatMap((f) => parseObjects(readFileSync(join(dir, f), 'utf8'))),
      ['kube-system'],
    );
    expect(objects.filter((o) => o.kind === 'ServiceExport')).toHaveLength(2);
    expect(await dryRunAll(objects)).toEqual([]);
    console.info(`deploy: samples: ${objects.length} objects accepted (dry run)`);
  });
});
