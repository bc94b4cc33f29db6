/** Gathers what doctor checks, through the adapters, and evaluates every check. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import { readClusterProperties } from '../kube/cluster-properties.js';
import type { CrdInfo } from '../kube/objects.js';
import type { KubeReader } from '../kube/reader.js';
import type { HealthProbe } from './agents.js';
import { checkAgents } from './agents.js';
import { checkCloudMap, probeCloudMap } from './cloudmap.js';
import { checkClusterProperties } from './cluster-properties.js';
import { checkCoreDns } from './corefile.js';
import { CRD_REQUIREMENTS, checkCrds } from './crds.js';
import type { CheckGroup, CheckResult } from './result.js';
import { problem } from './result.js';

export interface DoctorDeps {
  kube: KubeReader;
  /** Absent when no Cloud Map region/endpoint is configured. */
  cloudMap?: { port: CloudMapPort; endpoint: string } | undefined;
  /** GET `<url>/readyz` of a locally run agent. */
  fetchReadyz: (url: string) => Promise<HealthProbe['readyz']>;
  agentUrls: readonly string[];
  /** Where the Corefile lives. */
  coredns: { namespace: string; configMap: string };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function guarded(
  group: CheckGroup,
  what: string,
  run: () => Promise<CheckResult[]>,
): Promise<CheckResult[]> {
  try {
    return await run();
  } catch (e) {
    return [
      problem(
        group,
        what,
        'fail',
        `could not be checked: ${message(e)}`,
        'check the kubeconfig/context and that your user may read this (kubectl auth can-i)',
      ),
    ];
  }
}

export async function runDoctor(deps: DoctorDeps): Promise<CheckResult[]> {
  const { kube } = deps;
  const crds = guarded('crds', 'CRDs', async () => {
    const found = new Map<string, CrdInfo | undefined>();
    await Promise.all(
      CRD_REQUIREMENTS.map(async (r) => found.set(r.name, await kube.getCrd(r.name))),
    );
    return checkCrds(found);
  });
  const props = guarded('cluster-properties', 'ClusterProperties', async () =>
    checkClusterProperties(await readClusterProperties(kube)),
  );
  const cloudMap = guarded('cloudmap', 'Cloud Map', async () =>
    deps.cloudMap === undefined
      ? checkCloudMap(undefined, '')
      : checkCloudMap(await probeCloudMap(deps.cloudMap.port), deps.cloudMap.endpoint),
  );
  const agents = guarded('agents', 'agents', async () => {
    const [deployments, health] = await Promise.all([
      kube.listDeployments(),
      Promise.all(
        deps.agentUrls.map(async (url) => ({ url, readyz: await deps.fetchReadyz(url) })),
      ),
    ]);
    return checkAgents(deployments, health);
  });
  const { namespace, configMap } = deps.coredns;
  const coredns = guarded('coredns', 'CoreDNS', async () => {
    const [data, deployments] = await Promise.all([
      kube.getConfigMapData(namespace, configMap),
      kube.listDeployments(),
    ]);
    // The CoreDNS Deployment (kube-system/coredns on kubeadm, EKS and kind), for its version.
    const deployment = deployments.find((d) => d.namespace === namespace && d.name === configMap);
    return [
      checkCoreDns(
        data?.['Corefile'],
        data === undefined
          ? `no ConfigMap ${namespace}/${configMap}`
          : `ConfigMap ${namespace}/${configMap}`,
        deployment?.images[0],
      ),
    ];
  });
  return (await Promise.all([crds, props, cloudMap, agents, coredns])).flat();
}
