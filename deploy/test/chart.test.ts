// The Helm chart rendered by a real helm (built from the Go module proxy): what each mode
// creates, the security settings, the RBAC tables, the values schema and the CRD copies.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  KubernetesObject,
  V1ClusterRole,
  V1Deployment,
  V1EnvVar,
  V1PolicyRule,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  chartDir,
  deployDir,
  helm,
  helmBinary,
  key,
  modes,
  render,
  type Mode,
} from './support/helm.js';

beforeAll(() => {
  helmBinary();
});

const component = (o: KubernetesObject): string | undefined =>
  o.metadata?.labels?.['app.kubernetes.io/component'];

const ofKind = <T extends KubernetesObject>(objs: KubernetesObject[], kind: string): T[] =>
  objs.filter((o) => o.kind === kind) as T[];

const one = <T extends KubernetesObject>(
  objs: KubernetesObject[],
  kind: string,
  comp: string,
): T => {
  const found = ofKind<T>(objs, kind).filter((o) => component(o) === comp);
  expect(found, `${kind} of ${comp}`).toHaveLength(1);
  return found[0] as T;
};

const envOf = (d: V1Deployment): Map<string, V1EnvVar> =>
  new Map((d.spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e]));

/** `group/resource:verb` for every verb a ClusterRole grants. */
const grants = (rules: V1PolicyRule[] | undefined): string[] =>
  (rules ?? [])
    .flatMap((r) =>
      (r.apiGroups ?? []).flatMap((g) =>
        (r.resources ?? []).flatMap((res) =>
          r.verbs.map((v) => `${g === '' ? 'core' : g}/${res}:${v}`),
        ),
      ),
    )
    .sort();

const perAgentKinds = [
  'ClusterRole',
  'ClusterRoleBinding',
  'Deployment',
  'PodDisruptionBudget',
  'Role',
  'RoleBinding',
  'Service',
  'ServiceAccount',
];

describe.each(Object.keys(modes) as Mode[])('mode %s', (mode) => {
  const enabled = {
    'export-agent': mode !== 'import-only',
    'import-agent': mode !== 'export-only',
  };

  it('renders exactly the enabled agents, each with its own objects', () => {
    const out = render({ values: modes[mode] });
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    for (const [comp, on] of Object.entries(enabled)) {
      const kinds = out.objects
        .filter((o) => component(o) === comp)
        .map((o) => o.kind)
        .sort();
      // The export agent reads nothing of the import agent's (ADR 0020): the same kinds.
      expect(kinds, comp).toEqual(on ? perAgentKinds : []);
    }
    // Nothing without a component except what the values ask for (none by default), and no
    // CRDs: those live in crds/ and are installed by helm before the templates.
    expect(out.objects.filter((o) => component(o) === undefined).map(key)).toEqual([]);
    expect(ofKind(out.objects, 'CustomResourceDefinition')).toEqual([]);
    const keys = out.objects.map(key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('runs every enabled agent non-root, read-only, without privilege escalation or capabilities', () => {
    const out = render({ values: modes[mode] });
    for (const d of ofKind<V1Deployment>(out.objects, 'Deployment')) {
      const pod = d.spec?.template.spec;
      const c = pod?.containers[0];
      expect(pod?.containers).toHaveLength(1);
      expect(pod?.securityContext?.runAsNonRoot).toBe(true);
      expect(pod?.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(pod?.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
      expect(c?.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        privileged: false,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c?.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(c?.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(c?.resources?.requests).toBeDefined();
      expect(c?.resources?.limits?.['memory']).toBeDefined();
      const comp = component(d) ?? '';
      const sa = one<V1ServiceAccount>(out.objects, 'ServiceAccount', comp);
      expect(pod?.serviceAccountName).toBe(sa.metadata?.name);
      expect(d.spec?.replicas).toBe(2);
      expect(envOf(d).get('MCS_LEADER_ELECT')?.value).toBe('true');
      expect(d.spec?.template.metadata?.labels).toMatchObject(d.spec?.selector.matchLabels ?? {});
    }
  });
});

describe('values', () => {
  it('gives each agent its own ServiceAccount annotations (IRSA / Pod Identity)', () => {
    const out = render({
      values: {
        exportAgent: {
          serviceAccount: {
            annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/exp' },
          },
        },
        importAgent: {
          serviceAccount: {
            annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/imp' },
          },
        },
      },
    });
    expect(out.status).toBe(0);
    const exp = one<V1ServiceAccount>(out.objects, 'ServiceAccount', 'export-agent');
    const imp = one<V1ServiceAccount>(out.objects, 'ServiceAccount', 'import-agent');
    expect(exp.metadata?.annotations?.['eks.amazonaws.com/role-arn']).toMatch(/role\/exp$/);
    expect(imp.metadata?.annotations?.['eks.amazonaws.com/role-arn']).toMatch(/role\/imp$/);
    expect(exp.metadata?.name).not.toBe(imp.metadata?.name);
  });

  it('passes exportAgent.podLabelAttributes as MCS_POD_LABEL_ATTRIBUTES, and nothing when empty', () => {
    const envWith = (values: Record<string, unknown>) => {
      const out = render({ values });
      expect(out.status).toBe(0);
      return envOf(one<V1Deployment>(out.objects, 'Deployment', 'export-agent'));
    };
    expect(envWith({}).has('MCS_POD_LABEL_ATTRIBUTES')).toBe(false);
    expect(
      envWith({ exportAgent: { podLabelAttributes: 'version,track' } }).get(
        'MCS_POD_LABEL_ATTRIBUTES',
      )?.value,
    ).toBe('version,track');
  });

  it('passes the shared settings to both agents and the per-agent ones to each', () => {
    const out = render({
      values: {
        cluster: { clusterId: 'east-1', clusterSetId: 'prod' },
        aws: {
          region: 'eu-west-1',
          assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
          cloudMapEndpoint: 'https://servicediscovery.eu-west-1.amazonaws.com',
        },
        logLevel: 'debug',
        importAgent: {
          allowedCidrs: ['10.0.0.0/8', 'fd00::/8'],
          poll: { fastSeconds: 7 },
          requestBudget: 50,
        },
        exportAgent: {
          extraEnv: [{ name: 'EXTRA', value: '1' }],
          extraArgs: ['--foo'],
          registerRate: 5,
        },
      },
    });
    expect(out.status).toBe(0);
    const exp = one<V1Deployment>(out.objects, 'Deployment', 'export-agent');
    const imp = one<V1Deployment>(out.objects, 'Deployment', 'import-agent');
    for (const d of [exp, imp]) {
      const env = envOf(d);
      // The SDK's own variables (issue 31: no --region / --cloudmap-endpoint flags).
      expect(env.get('AWS_REGION')?.value).toBe('eu-west-1');
      expect(env.get('MCS_ASSUME_ROLE_ARN')?.value).toBe(
        'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
      );
      expect(env.get('AWS_ENDPOINT_URL_SERVICEDISCOVERY')?.value).toBe(
        'https://servicediscovery.eu-west-1.amazonaws.com',
      );
      expect(env.get('MCS_LOG_LEVEL')?.value).toBe('debug');
      expect(env.get('MCS_CLUSTER_ID')?.value).toBe('east-1');
      expect(env.get('MCS_CLUSTERSET_ID')?.value).toBe('prod');
      // The downward API: the Lease's namespace and this replica (Lease holder, Events).
      expect(env.get('POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
      expect(env.get('POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
      // Retired variables would stop the agent (core RETIRED_VARIABLES).
      for (const gone of ['MCS_REGION', 'MCS_CLOUDMAP_ENDPOINT', 'MCS_LOG_FORMAT', 'MCS_IDENTITY'])
        expect(env.has(gone), gone).toBe(false);
      // IRSA injects AWS_ROLE_ARN itself; the chart must not collide with it.
      expect(env.has('AWS_ROLE_ARN')).toBe(false);
    }
    const impEnv = envOf(imp);
    const expEnv = envOf(exp);
    expect(impEnv.get('MCS_ALLOWED_CIDRS')?.value).toBe('10.0.0.0/8,fd00::/8');
    expect(impEnv.get('MCS_POLL_FAST_SECONDS')?.value).toBe('7');
    expect(impEnv.get('MCS_REQUEST_BUDGET')?.value).toBe('50');
    expect(impEnv.get('MCS_METRICS_PORT')?.value).toBe('8080');
    expect(expEnv.get('MCS_REGISTER_RATE')?.value).toBe('5');
    // Each agent parses strictly: it gets only the variables it knows.
    expect(impEnv.get('MCS_DENIED_NAMESPACES')?.value).toBe(
      'kube-system,kube-public,kube-node-lease,default',
    );
    expect(impEnv.has('MCS_ALLOWED_NAMESPACES')).toBe(false);
    expect(impEnv.get('MCS_MAX_IMPORTS_PER_NAMESPACE')?.value).toBe('2000');
    expect(impEnv.get('MCS_MAX_IMPORTS')?.value).toBe('5000');
    for (const name of [
      'MCS_ALLOWED_CIDRS',
      'MCS_DENIED_NAMESPACES',
      'MCS_POLL_FAST_SECONDS',
      // The export agent serves /metrics on its health port (chart: metricsPortName).
      'MCS_METRICS_PORT',
    ]) {
      expect(expEnv.has(name), name).toBe(false);
    }
    for (const name of ['MCS_REGISTER_RATE', 'MCS_RESYNC_SECONDS']) {
      expect(impEnv.has(name), name).toBe(false);
    }
    // Lease timings are common flags now: both agents get them.
    expect(impEnv.get('MCS_RENEW_DEADLINE_SECONDS')?.value).toBe('10');
    expect(expEnv.get('EXTRA')?.value).toBe('1');
    expect(impEnv.has('EXTRA')).toBe(false);
    expect(exp.spec?.template.spec?.containers[0]?.args).toEqual(['--foo']);
  });

  it('serves metrics where each agent listens: its own port (import) or the health port (export)', () => {
    const out = render({ values: {} });
    const svc = (comp: string) =>
      one<KubernetesObject & { spec: { ports: { port: number; targetPort: string }[] } }>(
        out.objects,
        'Service',
        comp,
      ).spec.ports;
    expect(svc('export-agent')).toEqual([
      { name: 'metrics', port: 8080, targetPort: 'health', protocol: 'TCP' },
    ]);
    expect(svc('import-agent')).toEqual([
      { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    const ports = (comp: string) =>
      one<V1Deployment>(
        out.objects,
        'Deployment',
        comp,
      ).spec?.template.spec?.containers[0]?.ports?.map((p) => `${p.name ?? ''}:${p.containerPort}`);
    expect(ports('export-agent')).toEqual(['health:8081']);
    expect(ports('import-agent')).toEqual(['health:8081', 'metrics:8080']);
  });

  it('lets each agent assume its own registry role, falling back to aws.assumeRoleArn', () => {
    const shared = 'arn:aws:iam::444455556666:role/cloudmap-mcs-shared';
    const own = 'arn:aws:iam::444455556666:role/cloudmap-mcs-import-agent';
    const out = render({
      values: { aws: { assumeRoleArn: shared }, importAgent: { assumeRoleArn: own } },
    });
    expect(out.status).toBe(0);
    const role = (comp: string) =>
      envOf(one<V1Deployment>(out.objects, 'Deployment', comp)).get('MCS_ASSUME_ROLE_ARN')?.value;
    expect(role('export-agent')).toBe(shared);
    expect(role('import-agent')).toBe(own);
  });

  it('passes the STS external ID to both agents', () => {
    const aws = {
      assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
      externalId: 'x-1',
    };
    const out = render({ values: { aws } });
    expect(out.status, out.stderr).toBe(0);
    for (const comp of ['export-agent', 'import-agent'])
      expect(
        envOf(one<V1Deployment>(out.objects, 'Deployment', comp)).get('MCS_ASSUME_ROLE_EXTERNAL_ID')
          ?.value,
      ).toBe('x-1');
  });

  it('creates the two ClusterProperties on request, kept on uninstall', () => {
    const out = render({
      values: {
        cluster: { clusterId: 'east-1', clusterSetId: 'prod', createClusterProperties: true },
      },
    });
    expect(out.status).toBe(0);
    const props = ofKind<KubernetesObject & { spec: { value: string } }>(
      out.objects,
      'ClusterProperty',
    );
    expect(Object.fromEntries(props.map((p) => [p.metadata?.name, p.spec.value]))).toEqual({
      'cluster.clusterset.k8s.io': 'east-1',
      'clusterset.k8s.io': 'prod',
    });
    for (const p of props)
      expect(p.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    // The agents then read the ClusterProperties rather than being told.
    const d = one<V1Deployment>(out.objects, 'Deployment', 'export-agent');
    expect(envOf(d).has('MCS_CLUSTER_ID')).toBe(false);
  });

  it('pins images by digest, scales to one replica without election, and honours minAvailable', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const out = render({
      values: {
        exportAgent: {
          image: { digest },
          replicas: 1,
          leaderElection: { enabled: false },
          podDisruptionBudget: { minAvailable: 1 },
        },
        metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } },
      },
    });
    expect(out.status).toBe(0);
    const d = one<V1Deployment>(out.objects, 'Deployment', 'export-agent');
    expect(d.spec?.template.spec?.containers[0]?.image).toBe(
      `ghcr.io/cloudmap-mcs/export-agent@${digest}`,
    );
    expect(envOf(d).get('MCS_LEADER_ELECT')?.value).toBe('false');
    // No leader-election Role, and no Lease to read (ADR 0020: it reads nothing of the
    // import agent's).
    expect(out.objects.filter((o) => o.kind === 'Role' && component(o) === 'export-agent')).toEqual(
      [],
    );
    expect(envOf(d).has('MCS_LEASE_NAME')).toBe(false);
    const pdb = one<KubernetesObject & { spec: Record<string, unknown> }>(
      out.objects,
      'PodDisruptionBudget',
      'export-agent',
    );
    expect(pdb.spec['minAvailable']).toBe(1);
    expect(pdb.spec['maxUnavailable']).toBeUndefined();
    const sms = ofKind(out.objects, 'ServiceMonitor');
    expect(sms.map(component).sort()).toEqual(['export-agent', 'import-agent']);
    expect(sms[0]?.metadata?.labels?.['release']).toBe('prom');
  });

  it('limits leader election to the agent lease', () => {
    const out = render({ values: { importAgent: { leaderElection: { leaseName: 'imp-lease' } } } });
    const role = one<KubernetesObject & { rules: V1PolicyRule[] }>(
      out.objects,
      'Role',
      'import-agent',
    );
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['imp-lease'],
        verbs: ['get', 'update'],
      },
    ]);
    const d = one<V1Deployment>(out.objects, 'Deployment', 'import-agent');
    expect(envOf(d).get('MCS_LEASE_NAME')?.value).toBe('imp-lease');
  });
});

describe('RBAC', () => {
  const out = (): KubernetesObject[] => render({ values: modes.both }).objects;

  it('gives the export agent read access, ServiceExport patch (finalizer) and status, Events', () => {
    const role = one<V1ClusterRole>(out(), 'ClusterRole', 'export-agent');
    expect(grants(role.rules)).toEqual(
      [
        'about.k8s.io/clusterproperties:get',
        'about.k8s.io/clusterproperties:list',
        'about.k8s.io/clusterproperties:watch',
        'events.k8s.io/events:create',
        'core/pods:get',
        'core/pods:list',
        'core/pods:watch',
        'core/services:get',
        'core/services:list',
        'core/services:watch',
        'discovery.k8s.io/endpointslices:get',
        'discovery.k8s.io/endpointslices:list',
        'discovery.k8s.io/endpointslices:watch',
        'multicluster.x-k8s.io/serviceexports/status:patch',
        'multicluster.x-k8s.io/serviceexports:get',
        'multicluster.x-k8s.io/serviceexports:list',
        'multicluster.x-k8s.io/serviceexports:patch',
        'multicluster.x-k8s.io/serviceexports:watch',
      ].sort(),
    );
  });

  it('gives the export agent nothing of the import agent: no Lease, no ServiceImports, no pod IP (ADR 0020)', () => {
    for (const values of [
      modes.both,
      { importAgent: { leaderElection: { leaseName: 'imp-lease' } } },
    ]) {
      const both = render({ values });
      expect(both.stderr).toBe('');
      expect(both.objects.filter((o) => o.metadata?.name?.endsWith('import-agent-lease'))).toEqual(
        [],
      );
      for (const agent of ['export-agent', 'import-agent'] as const) {
        const env = envOf(one<V1Deployment>(both.objects, 'Deployment', agent));
        for (const gone of [
          'MCS_IMPORT_AGENT_LEASE',
          'MCS_PEER_CHECK_HINTED_SECONDS',
          'MCS_QUIET_LEASE',
          'MCS_ADVERTISE_HOST',
          'MCS_NUDGE',
          'MCS_NUDGE_HOST',
          'MCS_POLL_FEED_NUDGED_SECONDS',
        ])
          expect(env.has(gone), `${agent} ${gone}`).toBe(false);
      }
    }
    // The values are gone too: the schema refuses them.
    for (const values of [
      { exportAgent: { leaderElection: { quiet: true } } },
      { exportAgent: { importAgentLease: 'other' } },
      { exportAgent: { nudges: true } },
      { importAgent: { nudges: true } },
    ])
      expect(render({ values }).status).not.toBe(0);
  });

  it('gives the import agent its own objects (apply, delete), Events, and nothing of the export side', () => {
    const role = one<V1ClusterRole>(out(), 'ClusterRole', 'import-agent');
    expect(grants(role.rules)).toEqual(
      [
        'about.k8s.io/clusterproperties:get',
        'about.k8s.io/clusterproperties:list',
        'about.k8s.io/clusterproperties:watch',
        'core/namespaces:get',
        'core/namespaces:list',
        'core/namespaces:watch',
        'events.k8s.io/events:create',
        // this cluster's own addresses, refused as endpoints
        'core/nodes:list',
        'networking.k8s.io/servicecidrs:list',
        // read only: records claiming this cluster's id import only while it exports
        'multicluster.x-k8s.io/serviceexports:get',
        'multicluster.x-k8s.io/serviceexports:list',
        'multicluster.x-k8s.io/serviceexports:watch',
        ...[
          'multicluster.x-k8s.io/serviceimports',
          'core/services',
          'discovery.k8s.io/endpointslices',
        ].flatMap((r) =>
          ['get', 'list', 'watch', 'create', 'patch', 'delete'].map((v) => `${r}:${v}`),
        ),
        'multicluster.x-k8s.io/serviceimports/status:patch',
        // the user's choice of non-Kubernetes Cloud Map services (ADR 0014): read, status written
        'multicluster.cloudmap-mcs.io/cloudmapserviceimports:list',
        'multicluster.cloudmap-mcs.io/cloudmapserviceimports:watch',
        'multicluster.cloudmap-mcs.io/cloudmapserviceimports/status:patch',
      ].sort(),
    );
  });

  it('binds each ClusterRole to its own agent ServiceAccount only', () => {
    const objs = out();
    for (const comp of ['export-agent', 'import-agent']) {
      const binding = one<
        KubernetesObject & {
          roleRef: { name: string };
          subjects: { name: string; namespace: string }[];
        }
      >(objs, 'ClusterRoleBinding', comp);
      const sa = one<V1ServiceAccount>(objs, 'ServiceAccount', comp);
      expect(binding.roleRef.name).toBe(one(objs, 'ClusterRole', comp).metadata?.name);
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: sa.metadata?.name, namespace: 'cloudmap-mcs' },
      ]);
    }
  });
});

describe('values schema', () => {
  const schemaError = "values don't meet the specifications of the schema";
  it.each([
    [
      'a string replica count',
      { exportAgent: { replicas: 'two' } },
      "at '/exportAgent/replicas': got string, want integer",
    ],
    [
      'a misspelt key',
      { importAgent: { replica: 3 } },
      "at '/importAgent': additional properties 'replica' not allowed",
    ],
    ['a malformed region', { aws: { region: 'US East' } }, '/aws/region'],
    [
      'a cluster ID that is not a DNS label',
      { cluster: { clusterId: 'Bad_ID' } },
      '/cluster/clusterId',
    ],
    [
      'ClusterProperties without identity',
      { cluster: { createClusterProperties: true, clusterSetId: 'prod' } },
      '/cluster/clusterId',
    ],
    ['an unknown log level', { logLevel: 'loud' }, '/logLevel'],
    [
      'a role that is not an IAM role ARN',
      { aws: { assumeRoleArn: 'my-role' } },
      '/aws/assumeRoleArn',
    ],
    [
      'a CIDR without prefix length',
      { importAgent: { allowedCidrs: ['10.0.0.0'] } },
      '/importAgent/allowedCidrs/0',
    ],
    [
      'a namespace that is not a DNS label',
      { importAgent: { namespaces: { denied: ['Kube_System'] } } },
      '/importAgent/namespaces/denied/0',
    ],
    ['a zero import cap', { importAgent: { maxImports: 0 } }, '/importAgent/maxImports'],
    [
      'a period that is not a whole number of seconds',
      { importAgent: { poll: { fastSeconds: '2s' } } },
      "at '/importAgent/poll/fastSeconds': got string, want integer",
    ],
    ['a log level the agents do not know', { logLevel: 'verbose' }, '/logLevel'],
    [
      'an export-only key on the import agent',
      { importAgent: { heartbeatSeconds: 30 } },
      "at '/importAgent': additional properties 'heartbeatSeconds' not allowed",
    ],
  ])('rejects %s', (_name, values, path) => {
    const out = render({ values });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain(schemaError);
    expect(out.stderr).toContain(path);
  });

  it.each([
    [
      'no agent at all',
      { exportAgent: { enabled: false }, importAgent: { enabled: false } },
      'nothing to deploy',
    ],
    [
      'several replicas without leader election',
      { importAgent: { leaderElection: { enabled: false } } },
      'importAgent.replicas is 2 but importAgent.leaderElection.enabled is false',
    ],
    [
      'an existing ServiceAccount without a name',
      { exportAgent: { serviceAccount: { create: false } } },
      'exportAgent.serviceAccount.name is required',
    ],
  ])('refuses %s with a clear message', (_name, values, message) => {
    const out = render({ values });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain(message);
  });

  it('describes the keys both agents share identically', () => {
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as {
      properties: Record<string, { properties: Record<string, unknown> }>;
    };
    const exp = schema.properties['exportAgent']?.properties ?? {};
    const imp = schema.properties['importAgent']?.properties ?? {};
    // leaderElection differs: only the export agent takes lease timings.
    const shared = Object.keys(exp).filter((k) => k in imp && k !== 'leaderElection');
    expect(shared.length).toBeGreaterThan(20);
    for (const k of shared) expect(imp[k], k).toEqual(exp[k]);
    // Every value the chart ships is described, so nothing escapes validation.
    const values = render({ values: {} });
    expect(values.status).toBe(0);
  });
});

describe('import agent endpoint addresses (issue 11)', () => {
  it('are an explicit choice: allowedCidrs or allowAllAddresses, not neither, not both', () => {
    const neither = render({ values: { importAgent: { addressChoice: false } } });
    expect(neither.status).not.toBe(0);
    expect(neither.stderr).toMatch(/choose which endpoint addresses may be imported/);
    const twice = render({
      values: {
        importAgent: {
          addressChoice: false,
          allowedCidrs: ['10.0.0.0/8'],
          allowAllAddresses: true,
        },
      },
    });
    expect(twice.status).not.toBe(0);
    expect(twice.stderr).toMatch(/not both/);
    // The export agent alone needs no choice.
    const exportOnly = render({
      values: {
        exportAgent: { enabled: true },
        importAgent: { enabled: false, addressChoice: false },
      },
    });
    expect(exportOnly.status, exportOnly.stderr).toBe(0);
  });

  it('passes the allow-list and the local Service CIDRs to the agent', () => {
    const out = render({
      values: {
        importAgent: { allowedCidrs: ['10.0.0.0/8'], localServiceCidrs: ['10.96.0.0/12'] },
      },
    });
    expect(out.status, out.stderr).toBe(0);
    const env = envOf(one<V1Deployment>(out.objects, 'Deployment', 'import-agent'));
    expect(env.get('MCS_ALLOWED_CIDRS')?.value).toBe('10.0.0.0/8');
    expect(env.get('MCS_LOCAL_SERVICE_CIDRS')?.value).toBe('10.96.0.0/12');
    const open = render({ values: { importAgent: { allowAllAddresses: true } } });
    expect(
      envOf(one<V1Deployment>(open.objects, 'Deployment', 'import-agent')).has('MCS_ALLOWED_CIDRS'),
    ).toBe(false);
  });
});

describe('chart packaging', () => {
  it('carries the same CRDs as deploy/crds, byte for byte', () => {
    const src = join(deployDir, 'crds');
    const dst = join(chartDir, 'crds');
    const names = readdirSync(src)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(readdirSync(dst).sort()).toEqual(names);
    for (const f of names) {
      expect(readFileSync(join(dst, f), 'utf8'), f).toBe(readFileSync(join(src, f), 'utf8'));
    }
    const withCrds = render({ values: modes.both, includeCrds: true });
    expect(
      withCrds.objects
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual([
      'cloudmapserviceimports.multicluster.cloudmap-mcs.io',
      'clusterproperties.about.k8s.io',
      'serviceexports.multicluster.x-k8s.io',
      'serviceimports.multicluster.x-k8s.io',
    ]);
  });

  it('passes helm lint --strict in every mode', () => {
    for (const mode of Object.keys(modes) as Mode[]) {
      const sets = Object.entries(modes[mode]).map(
        ([agent, v]) => `${agent}.enabled=${String(v.enabled)}`,
      );
      const res = helm(['lint', '--strict', chartDir, ...sets.flatMap((s) => ['--set', s])]);
      expect(res.stdout + res.stderr, mode).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(res.status, mode).toBe(0);
    }
  });
});
