/** Gathers what doctor checks, through the adapters, and evaluates every check. */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import { readClusterProperties } from '../kube/cluster-properties.js';
import type { CrdInfo, DeploymentInfo } from '../kube/objects.js';
import type { KubeReader } from '../kube/reader.js';
import type { AgentRole, RoleAttempt } from './agent-role.js';
import { agentRole, checkAgentRole } from './agent-role.js';
import type { AgentFacts, AgentKind, HealthProbe } from './agents.js';
import { agentKind, checkAgents, leaderElectOf, leaseNameOf } from './agents.js';
import { AGENT_ACTIONS, checkCloudMap, probeCloudMap } from './cloudmap.js';
import { checkClusterProperties } from './cluster-properties.js';
import { checkCoreDns, checkCoreDnsCache } from './corefile.js';
import { CRD_REQUIREMENTS, checkCrds } from './crds.js';
import type { CheckGroup, CheckResult } from './result.js';
import { problem } from './result.js';

export interface CloudMapAccessLike {
  port: CloudMapPort;
  endpoint: string;
}

export interface DoctorDeps {
  kube: KubeReader;
  /** Absent when no Cloud Map region/endpoint is configured (the operator's credentials). */
  cloudMap?: CloudMapAccessLike | undefined;
  /**
   * Cloud Map as `roleArn`, assumed with the operator's credentials; rejects when the role
   * cannot be assumed. Absent: doctor never tries a role.
   */
  actAs?:
    ((role: { roleArn: string; externalId?: string }) => Promise<CloudMapAccessLike>) | undefined;
  /** --export-role-arn / --import-role-arn. */
  roleArns?: Partial<Record<AgentKind, string>>;
  /** GET `<url>/readyz` of a locally run agent. */
  fetchReadyz: (url: string) => Promise<HealthProbe['readyz']>;
  agentUrls: readonly string[];
  /** Where the Corefile lives. */
  coredns: { namespace: string; configMap: string };
  now?: () => number;
}

const message = (e: unknown) =>
  e instanceof Error
    ? `${e.message}${e.cause instanceof Error && e.cause.message !== '' ? ` (${e.cause.message})` : ''}`
    : String(e);

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

/** Each agent Deployment with its pods and Lease. */
async function agentFacts(kube: KubeReader, deployments: DeploymentInfo[]): Promise<AgentFacts[]> {
  const found = deployments
    .map((d) => ({ d, kind: agentKind(d) }))
    .filter((a): a is { d: DeploymentInfo; kind: AgentKind } => a.kind !== undefined);
  return Promise.all(
    found.map(async ({ d, kind }) => {
      const leaseName = leaseNameOf(kind, d);
      const leaderElect = leaderElectOf(d);
      const [pods, lease] = await Promise.all([
        Object.keys(d.selector).length === 0 ? [] : kube.listPods(d.namespace, d.selector),
        leaderElect ? kube.getLease(d.namespace, leaseName) : undefined,
      ]);
      return { kind, deployment: d, pods, leaderElect, leaseName, lease };
    }),
  );
}

/** Per agent kind: its role, then the reads its policy grants, as that role where possible. */
async function cloudMapChecks(
  deps: DoctorDeps,
  agents: readonly AgentFacts[],
): Promise<CheckResult[]> {
  const operator = deps.cloudMap;
  if (operator === undefined) return checkCloudMap(undefined, '', 'export');
  const results: CheckResult[] = [];
  for (const kind of ['export', 'import'] as const) {
    const agent = agents.find((a) => a.kind === kind);
    const d = agent?.deployment;
    const sa =
      d === undefined
        ? undefined
        : // Without read access to ServiceAccounts the role is just unknown.
          await deps.kube
            .getServiceAccount(d.namespace, d.serviceAccountName || 'default')
            .catch(() => undefined);
    const role: AgentRole = agentRole(kind, deps.roleArns?.[kind], d, sa, agent?.pods ?? []);
    let access = operator;
    let attempt: RoleAttempt = { assumed: false };
    if (role.roleArn !== undefined && deps.actAs !== undefined) {
      try {
        access = await deps.actAs({
          roleArn: role.roleArn,
          ...(role.externalId === undefined ? {} : { externalId: role.externalId }),
        });
        attempt = { assumed: true };
      } catch (e) {
        attempt = { assumed: false, error: message(e) };
      }
    }
    results.push(checkAgentRole(role, attempt));
    const probes = await probeCloudMap(access.port, AGENT_ACTIONS[kind].reads);
    const checked = checkCloudMap(
      probes,
      access.endpoint,
      kind,
      attempt.assumed ? role.roleArn : undefined,
    );
    results.push(...checked);
    // Unreachable is said once, not once per agent.
    if (checked.some((r) => r.subject === 'Cloud Map')) break;
  }
  return results;
}

export async function runDoctor(deps: DoctorDeps): Promise<CheckResult[]> {
  const { kube } = deps;
  const now = deps.now ?? Date.now;
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
  const deployments = kube.listDeployments();
  const facts = deployments.then((list) => agentFacts(kube, list));
  // Cloud Map is probed even when the agents cannot be read (with the operator's credentials).
  const cloudMap = guarded('cloudmap', 'Cloud Map', async () =>
    cloudMapChecks(deps, await facts.catch(() => [])),
  );
  const agents = guarded('agents', 'agents', async () => {
    const [list, health] = await Promise.all([
      facts,
      Promise.all(
        deps.agentUrls.map(async (url) => ({ url, readyz: await deps.fetchReadyz(url) })),
      ),
    ]);
    return checkAgents(list, health, now());
  });
  const { namespace, configMap } = deps.coredns;
  const coredns = guarded('coredns', 'CoreDNS', async () => {
    const [data, list] = await Promise.all([
      kube.getConfigMapData(namespace, configMap),
      deployments,
    ]);
    // The CoreDNS Deployment (kube-system/coredns on kubeadm, EKS and kind), for its version.
    const deployment = list.find((d) => d.namespace === namespace && d.name === configMap);
    const where =
      data === undefined
        ? `no ConfigMap ${namespace}/${configMap}`
        : `ConfigMap ${namespace}/${configMap}`;
    const cache = checkCoreDnsCache(data?.['Corefile'], where);
    return [
      checkCoreDns(data?.['Corefile'], where, deployment?.images[0]),
      ...(cache === undefined ? [] : [cache]),
    ];
  });
  return (await Promise.all([crds, props, cloudMap, agents, coredns])).flat();
}
