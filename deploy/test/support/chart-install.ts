// What `helm install` of the chart leaves on a harness cluster, for suites that run doctor
// against it: the rendered objects (CRDs first) server-side applied, the Deployments made
// ready by kwok (no container runs), and what the running agents would add themselves: a
// Lease per agent naming a Ready pod, as client-go leader election writes it. Plus the
// CoreDNS Corefile doctor checks (the harness runs no CoreDNS).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject, V1Deployment, V1PodList } from '@kubernetes/client-node';
import { loadKubeconfig, waitFor } from '@cloudmap-mcs/e2e';
import { parseObjects, render, repoRoot } from './helm.js';
import { kubeRequest, ResourceMapper, serverSideApply } from './kube.js';

export interface Install {
  kubeconfig: string;
  namespace: string;
  deployments: Record<'export' | 'import', string>;
  /** The agent container's name in each Deployment. */
  containers: Record<'export' | 'import', string>;
  serviceAccounts: Record<'export' | 'import', string>;
}

const NAMESPACE = 'cloudmap-mcs';

async function ok(what: string, res: Promise<{ status: number; body: string }>) {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 400)}`);
  return JSON.parse(r.body) as unknown;
}

export async function installChartWithLeaders(
  kubeconfig: string,
  values: Record<string, unknown>,
): Promise<Install> {
  const rendered = render({ values, namespace: NAMESPACE, includeCrds: true });
  if (rendered.status !== 0) throw new Error(`helm template: ${rendered.stderr}`);
  const kc = loadKubeconfig(kubeconfig);
  const mapper = new ResourceMapper(kc);
  const apply = (o: KubernetesObject) =>
    ok(`apply ${o.kind}/${o.metadata?.name}`, serverSideApply(kc, mapper, o, { dryRun: false }));
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  const crds = rendered.objects.filter((o) => o.kind === 'CustomResourceDefinition');
  for (const o of crds) await apply(o);
  await waitFor('CRDs established', async () => {
    for (const o of crds) {
      const crd = (await ok(
        'read CRD',
        kubeRequest(
          kc,
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${o.metadata?.name}`,
        ),
      )) as { status?: { conditions?: { type: string; status: string }[] } };
      if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
        return false;
    }
    return true;
  });
  for (const o of rendered.objects.filter((x) => x.kind !== 'CustomResourceDefinition'))
    await apply(o);
  // The Corefile the install docs have operators apply.
  for (const o of parseObjects(
    readFileSync(join(repoRoot, 'samples/coredns/corefile-configmap.yaml'), 'utf8'),
  ))
    await apply(o);

  const deployments = rendered.objects.filter((o): o is V1Deployment => o.kind === 'Deployment');
  const named = (kind: 'export' | 'import') => {
    const d = deployments.find((x) => x.metadata?.name?.endsWith(`-${kind}-agent`) === true);
    if (d === undefined) throw new Error(`the chart rendered no ${kind} agent Deployment`);
    return d;
  };
  const install: Install = {
    kubeconfig,
    namespace: NAMESPACE,
    deployments: { export: '', import: '' },
    containers: { export: '', import: '' },
    serviceAccounts: { export: '', import: '' },
  };
  for (const kind of ['export', 'import'] as const) {
    const d = named(kind);
    const name = d.metadata?.name ?? '';
    install.deployments[kind] = name;
    install.serviceAccounts[kind] = d.spec?.template.spec?.serviceAccountName ?? '';
    install.containers[kind] = d.spec?.template.spec?.containers[0]?.name ?? '';
    const env = d.spec?.template.spec?.containers[0]?.env ?? [];
    const leaseName = env.find((e) => e.name === 'MCS_LEASE_NAME')?.value ?? name;
    const selector = Object.entries(d.spec?.selector.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const leader = await waitFor(
      `a Ready pod of ${name}`,
      async () => {
        const pods = (await ok(
          'list pods',
          kubeRequest(
            kc,
            'GET',
            `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent(selector)}`,
          ),
        )) as V1PodList;
        return pods.items.find(
          (p) =>
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
        )?.metadata?.name;
      },
      { timeoutMs: 120_000 },
    );
    await apply({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName, namespace: NAMESPACE },
      // Nothing renews it here: a duration that outlasts the suite.
      spec: {
        holderIdentity: leader,
        leaseDurationSeconds: 3600,
        renewTime: new Date().toISOString().replace('Z', '000Z'),
      },
    } as KubernetesObject);
  }
  return install;
}

/** Points an agent's ServiceAccount's IRSA annotation at another role. */
export async function setIrsaRole(install: Install, kind: 'export' | 'import', roleArn: string) {
  const kc = loadKubeconfig(install.kubeconfig);
  await ok(
    'annotate ServiceAccount',
    kubeRequest(
      kc,
      'PATCH',
      `/api/v1/namespaces/${install.namespace}/serviceaccounts/${install.serviceAccounts[kind]}`,
      JSON.stringify({ metadata: { annotations: { 'eks.amazonaws.com/role-arn': roleArn } } }),
      'application/merge-patch+json',
    ),
  );
}

/** Sets one environment variable of an agent's container (a new rollout; kwok runs it). */
export async function setAgentEnv(
  install: Install,
  kind: 'export' | 'import',
  name: string,
  value: string,
) {
  const kc = loadKubeconfig(install.kubeconfig);
  const container = { name: install.containers[kind], env: [{ name, value }] };
  await ok(
    'patch Deployment',
    kubeRequest(
      kc,
      'PATCH',
      `/apis/apps/v1/namespaces/${install.namespace}/deployments/${install.deployments[kind]}`,
      JSON.stringify({ spec: { template: { spec: { containers: [container] } } } }),
      'application/strategic-merge-patch+json',
    ),
  );
}
