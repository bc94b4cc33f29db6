/**
 * Agents running and ready (pure): agent Deployments in the cluster, and/or health endpoints
 * of agents run as local processes (`--agents-url`).
 */
import type { DeploymentInfo } from '../kube/objects.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export type AgentKind = 'export' | 'import';

export interface HealthProbe {
  url: string;
  /** HTTP status of GET <url>/readyz, or the error when it could not be fetched. */
  readyz: { status: number; body: string } | { error: string };
}

/** Which agent a Deployment runs, from its standard labels or its name. */
function agentKind(d: DeploymentInfo): AgentKind | undefined {
  const text = [
    d.name,
    d.labels['app.kubernetes.io/name'] ?? '',
    d.labels['app.kubernetes.io/component'] ?? '',
    d.labels['app'] ?? '',
    ...d.images,
  ].join(' ');
  if (/export-agent/.test(text)) return 'export';
  if (/import-agent/.test(text)) return 'import';
  return undefined;
}

const INSTALL_FIX =
  'install the agents (helm install cloudmap-mcs deploy/charts/cloudmap-mcs -n cloudmap-mcs-system --create-namespace), or, for agents run as local processes, pass their health endpoints: --agents-url http://127.0.0.1:<health-port>';

export function checkAgents(
  deployments: readonly DeploymentInfo[],
  health: readonly HealthProbe[],
): CheckResult[] {
  const results: CheckResult[] = [];
  const agents = deployments
    .map((d) => ({ d, kind: agentKind(d) }))
    .filter((a): a is { d: DeploymentInfo; kind: AgentKind } => a.kind !== undefined);

  for (const { d, kind } of agents) {
    const subject = `${kind} agent Deployment ${d.namespace}/${d.name}`;
    const counts = `${d.readyReplicas}/${d.replicas} replicas ready`;
    if (d.replicas > 0 && d.readyReplicas >= 1) results.push(ok('agents', subject, counts));
    else
      results.push(
        problem(
          'agents',
          subject,
          'fail',
          d.replicas === 0 ? 'scaled to 0 replicas' : `not ready (${counts})`,
          d.replicas === 0
            ? `kubectl -n ${d.namespace} scale deployment ${d.name} --replicas=1`
            : `see why: kubectl -n ${d.namespace} describe deployment ${d.name}; kubectl -n ${d.namespace} logs deployment/${d.name}`,
        ),
      );
  }
  for (const h of health) {
    const subject = `agent ${h.url}`;
    if ('error' in h.readyz)
      results.push(
        problem(
          'agents',
          subject,
          'fail',
          `not reachable: ${h.readyz.error}`,
          'start the agent, or check the --agents-url (the agent health port)',
        ),
      );
    else if (h.readyz.status === 200) results.push(ok('agents', subject, '/readyz ok'));
    else
      results.push(
        problem(
          'agents',
          subject,
          'fail',
          `/readyz answered ${h.readyz.status}${h.readyz.body === '' ? '' : `: ${h.readyz.body.trim().slice(0, 300)}`}`,
          "read the agent's log; it is not ready until its caches synced, its ClusterProperties are valid and Cloud Map answered",
        ),
      );
  }
  if (agents.length === 0 && health.length === 0)
    results.push(
      problem('agents', 'agents', 'fail', 'no export or import agent found', INSTALL_FIX),
    );
  else if (health.length === 0) {
    const kinds = new Set(agents.map((a) => a.kind));
    for (const missing of (['export', 'import'] as const).filter((k) => !kinds.has(k)))
      results.push(
        problem(
          'agents',
          `${missing} agent`,
          'warn',
          `no ${missing} agent Deployment found: this cluster ${missing === 'export' ? 'cannot export services (fine for a consumer-only hub)' : 'imports nothing (fine for an export-only spoke)'}`,
          INSTALL_FIX,
        ),
      );
  }
  return results;
}
