// The chart options operators expect from the charts they already trust
// (aws-load-balancer-controller, external-dns, cert-manager): priority, anti-affinity,
// PodMonitor/ServiceMonitor, NetworkPolicy, extra volumes and envFrom; and the object names
// docs/install.md gives for IRSA.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1Deployment, V1ServiceAccount } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartDir, helm, helmBinary, render, repoRoot } from './support/helm.js';

beforeAll(() => {
  helmBinary();
});

const agents = ['export-agent', 'import-agent'] as const;
const component = (o: KubernetesObject): string | undefined =>
  o.metadata?.labels?.['app.kubernetes.io/component'];
const byKind = <T extends KubernetesObject>(objs: KubernetesObject[], kind: string): T[] =>
  objs.filter((o) => o.kind === kind) as T[];
const podSpec = (d: V1Deployment) => d.spec?.template.spec;

/** A NetworkPolicy as rendered YAML (client-node's type calls `from` `_from`). */
interface NetworkPolicy extends KubernetesObject {
  spec: {
    policyTypes: string[];
    ingress: { ports?: { port: string }[]; from?: unknown[] }[];
  };
}

describe('chart options', () => {
  it('runs the agents at system-cluster-critical, with soft anti-affinity, by default', () => {
    const out = render();
    for (const d of byKind<V1Deployment>(out.objects, 'Deployment')) {
      expect(podSpec(d)?.priorityClassName).toBe('system-cluster-critical');
      const terms =
        podSpec(d)?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
      expect(terms).toHaveLength(1);
      expect(terms?.[0]?.podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
      expect(terms?.[0]?.podAffinityTerm.labelSelector?.matchLabels).toEqual(
        d.spec?.selector.matchLabels,
      );
    }
  });

  it('takes hard or no anti-affinity, an affinity of the user instead, and no priority class', () => {
    const own = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    };
    const out = render({
      values: {
        exportAgent: { podAntiAffinity: 'hard', priorityClassName: '' },
        importAgent: { affinity: own },
      },
    });
    const [exp, imp] = agents.map((a) =>
      byKind<V1Deployment>(out.objects, 'Deployment').find((d) => component(d) === a),
    );
    expect(podSpec(exp as V1Deployment)?.priorityClassName).toBeUndefined();
    expect(
      podSpec(exp as V1Deployment)?.affinity?.podAntiAffinity
        ?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey,
    ).toBe('kubernetes.io/hostname');
    expect(podSpec(imp as V1Deployment)?.affinity).toEqual(own);
    const none = render({ values: { exportAgent: { podAntiAffinity: 'none' } } });
    const d = byKind<V1Deployment>(none.objects, 'Deployment').find(
      (o) => component(o) === 'export-agent',
    );
    expect(podSpec(d as V1Deployment)?.affinity).toBeUndefined();
    expect(render({ values: { exportAgent: { podAntiAffinity: 'maybe' } } }).status).not.toBe(0);
  });

  it('mounts extra volumes and takes envFrom (a custom CA bundle)', () => {
    const ca = {
      extraVolumes: [{ name: 'ca', configMap: { name: 'corporate-ca' } }],
      extraVolumeMounts: [{ name: 'ca', mountPath: '/etc/ca', readOnly: true }],
      envFrom: [{ secretRef: { name: 'proxy-settings' } }],
      extraEnv: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ca/ca.crt' }],
    };
    const out = render({ values: { exportAgent: ca, importAgent: ca } });
    for (const d of byKind<V1Deployment>(out.objects, 'Deployment')) {
      const spec = podSpec(d);
      expect(spec?.volumes?.map((v) => v.name)).toEqual(['tmp', 'ca']);
      const c = spec?.containers[0];
      expect(c?.volumeMounts?.map((m) => m.mountPath)).toEqual(['/tmp', '/etc/ca']);
      expect(c?.envFrom).toEqual(ca.envFrom);
    }
  });

  it('creates PodMonitors and ServiceMonitors where asked, with relabelings, on each agent’s metrics port', () => {
    const relabelings = [{ action: 'replace', targetLabel: 'cluster', replacement: 'east' }];
    const monitor = {
      enabled: true,
      namespace: 'monitoring',
      labels: { release: 'kube-prometheus-stack' },
      interval: '15s',
      relabelings,
      metricRelabelings: [{ action: 'drop', regex: 'nodejs_.*', sourceLabels: ['__name__'] }],
    };
    const out = render({
      values: { metrics: { serviceMonitor: monitor, podMonitor: monitor } },
      namespace: 'mcs',
    });
    expect(out.status, out.stderr).toBe(0);
    for (const kind of ['ServiceMonitor', 'PodMonitor']) {
      const monitors = byKind<KubernetesObject & { spec: Record<string, unknown> }>(
        out.objects,
        kind,
      );
      expect(monitors.map(component).sort()).toEqual([...agents]);
      for (const m of monitors) {
        expect(m.metadata?.namespace).toBe('monitoring');
        expect(m.metadata?.labels?.['release']).toBe('kube-prometheus-stack');
        expect(m.spec['namespaceSelector']).toEqual({ matchNames: ['mcs'] });
        const endpoints = (m.spec['endpoints'] ?? m.spec['podMetricsEndpoints']) as Record<
          string,
          unknown
        >[];
        expect(endpoints).toHaveLength(1);
        expect(endpoints[0]).toMatchObject({ path: '/metrics', interval: '15s', relabelings });
        // The export agent serves /metrics on its health port.
        if (kind === 'PodMonitor')
          expect(endpoints[0]?.['port']).toBe(
            component(m) === 'export-agent' ? 'health' : 'metrics',
          );
      }
    }
    expect(byKind(render().objects, 'PodMonitor')).toEqual([]);
  });

  it('admits only the probes and the scrapes with networkPolicy.enabled', () => {
    expect(byKind(render().objects, 'NetworkPolicy')).toEqual([]);
    const scrapers = [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }];
    const nodes = [{ ipBlock: { cidr: '10.0.0.0/16' } }];
    const out = render({
      values: { networkPolicy: { enabled: true, metricsFrom: scrapers, healthFrom: nodes } },
    });
    const policies = byKind<NetworkPolicy>(out.objects, 'NetworkPolicy');
    expect(policies.map(component).sort()).toEqual([...agents]);
    for (const p of policies) {
      expect(p.spec.policyTypes).toEqual(['Ingress']);
      const rules = p.spec.ingress.map((r) => ({
        ports: r.ports?.map((x) => x.port),
        from: r.from,
      }));
      expect(rules).toEqual(
        component(p) === 'import-agent'
          ? [
              { ports: ['health'], from: nodes },
              { ports: ['metrics'], from: scrapers },
            ]
          : [{ ports: ['health'], from: [...nodes, ...scrapers] }],
      );
    }
  });

  it('names the ServiceAccounts as docs/install.md says, also when the release contains cloudmap-mcs', () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'install.md'), 'utf8');
    for (const [release, fullname] of [
      ['mcs', 'mcs-cloudmap-mcs'],
      ['cloudmap-mcs', 'cloudmap-mcs'],
      ['prod-cloudmap-mcs', 'prod-cloudmap-mcs'],
    ] as const) {
      const names = byKind<V1ServiceAccount>(render({ release }).objects, 'ServiceAccount')
        .map((s) => s.metadata?.name)
        .sort();
      expect(names).toEqual([`${fullname}-export-agent`, `${fullname}-import-agent`]);
    }
    expect(doc).toContain('Release `mcs`: `mcs-cloudmap-mcs-export-agent`');
    expect(doc).toContain('release `cloudmap-mcs`:\n`cloudmap-mcs-export-agent`');
  });

  it('passes helm lint --strict with every new option on, and the schema refuses misspelt ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-lint-'));
    try {
      const values = join(dir, 'values.json');
      const on = { enabled: true, relabelings: [{ action: 'keep' }] };
      writeFileSync(
        values,
        JSON.stringify({
          importAgent: { allowAllAddresses: true, podAntiAffinity: 'hard' },
          metrics: {
            serviceMonitor: on,
            podMonitor: on,
            prometheusRule: { enabled: true, disabled: ['CloudMapMCSCloudMapThrottled'] },
            dashboard: { enabled: true },
          },
          networkPolicy: { enabled: true },
        }),
      );
      const res = helm(['lint', '--strict', chartDir, '-f', values]);
      expect(res.stdout + res.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const values of [
      { metrics: { podMonitor: { enabeld: true } } },
      { metrics: { prometheusRule: { disabled: ['HeartbeatFailing'] } } },
      { networkPolicy: { enabled: true, metricsFrom: 'monitoring' } },
      { exportAgent: { extraVolumeMounts: [{ name: 'ca' }] } },
    ]) {
      const out = render({ values });
      expect(out.status, JSON.stringify(values)).not.toBe(0);
      expect(out.stderr).toContain('values don');
    }
  });

  it('passes the AWS endpoint, FIPS, proxy and CA-bundle settings to both agents, none by default', () => {
    const envOf = (d: V1Deployment) =>
      new Map((podSpec(d)?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    const added = [
      'AWS_ENDPOINT_URL_SERVICEDISCOVERY',
      'AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA',
      'AWS_USE_FIPS_ENDPOINT',
      'NODE_USE_ENV_PROXY',
      'HTTPS_PROXY',
      'NO_PROXY',
      'NODE_EXTRA_CA_CERTS',
    ];
    for (const d of byKind<V1Deployment>(render().objects, 'Deployment')) {
      for (const name of added) expect(envOf(d).has(name), name).toBe(false);
      expect(podSpec(d)?.volumes?.map((v) => v.name)).toEqual(['tmp']);
    }
    const control = 'https://vpce-0a1b-x.servicediscovery.us-west-2.vpce.amazonaws.com';
    const data = 'https://vpce-0a1b-y.data-servicediscovery.us-west-2.vpce.amazonaws.com';
    const out = render({
      values: {
        aws: {
          cloudMapEndpoint: control,
          cloudMapDataEndpoint: data,
          useFipsEndpoint: true,
          proxy: { httpsProxy: 'http://proxy.example.internal:3128' },
          caBundle: { configMap: 'corp-ca' },
        },
      },
    });
    expect(out.status).toBe(0);
    const deployments = byKind<V1Deployment>(out.objects, 'Deployment');
    expect(deployments.map(component).sort()).toEqual([...agents]);
    for (const d of deployments) {
      expect(Object.fromEntries([...envOf(d)].filter(([k]) => added.includes(k)))).toEqual({
        AWS_ENDPOINT_URL_SERVICEDISCOVERY: control,
        AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA: data,
        AWS_USE_FIPS_ENDPOINT: 'true',
        NODE_USE_ENV_PROXY: '1',
        HTTPS_PROXY: 'http://proxy.example.internal:3128',
        NO_PROXY: '169.254.170.23,169.254.169.254,fd00:ec2::23,fd00:ec2::254',
        NODE_EXTRA_CA_CERTS: '/etc/cloudmap-mcs/aws-ca/ca.pem',
      });
      expect(podSpec(d)?.volumes).toContainEqual({
        name: 'aws-ca-bundle',
        configMap: { name: 'corp-ca' },
      });
      expect(podSpec(d)?.containers[0]?.volumeMounts).toContainEqual({
        name: 'aws-ca-bundle',
        mountPath: '/etc/cloudmap-mcs/aws-ca',
        readOnly: true,
      });
    }
    for (const aws of [
      { cloudMapDataEndpoint: 'data-servicediscovery.us-west-2.amazonaws.com' },
      { proxy: { httpsProxy: 'proxy:3128' } },
      { caBundle: { configMap: 'Corp CA' } },
    ]) {
      const bad = render({ values: { aws } });
      expect(bad.status, JSON.stringify(aws)).not.toBe(0);
      expect(bad.stderr).toContain('values don');
    }
  });
});
