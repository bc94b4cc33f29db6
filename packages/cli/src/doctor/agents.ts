/**
 * Agents running and leading (pure): for each agent Deployment, the holder of its Lease
 * (leader election as client-go does it, ADR 0020) and whether that holder's Pod is Ready —
 * a Ready standby is not "the agent". Agents run as local processes are checked through
 * their health endpoints (`--agents-url`).
 */
import type { DeploymentInfo, LeaseInfo, PodInfo } from '../kube/objects.js';
import { ageOfSeconds } from '../table.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export type AgentKind = 'export' | 'import';

export interface HealthProbe {
  url: string;
  /** HTTP status of GET <url>/readyz, or the error when it could not be fetched. */
  readyz: { status: number; body: string } | { error: string };
}

/** One agent Deployment with what its leadership is judged by. */
export interface AgentFacts {
  kind: AgentKind;
  deployment: DeploymentInfo;
  /** The Deployment's pods (by its selector). */
  pods: PodInfo[];
  /** false when MCS_LEADER_ELECT=false: every replica acts (only sane with one). */
  leaderElect: boolean;
  leaseName: string;
  /** undefined when the Lease does not exist. */
  lease: LeaseInfo | undefined;
}

/** Which agent a Deployment runs, from its standard labels or its name. */
export function agentKind(d: DeploymentInfo): AgentKind | undefined {
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

/** The Lease the agent uses: MCS_LEASE_NAME, else the agent's default (its --lease-name). */
export const leaseNameOf = (kind: AgentKind, d: DeploymentInfo): string =>
  d.env['MCS_LEASE_NAME'] ?? `cloudmap-mcs-${kind}-agent`;

export const leaderElectOf = (d: DeploymentInfo): boolean => d.env['MCS_LEADER_ELECT'] !== 'false';

const INSTALL_FIX =
  'install the agents (helm install cloudmap-mcs deploy/charts/cloudmap-mcs -n cloudmap-mcs-system --create-namespace), or, for agents run as local processes, pass their health endpoints: --agents-url http://127.0.0.1:<health-port>';

/** The leader of one agent Deployment, named, with its readiness. */
export function checkLeader(a: AgentFacts, nowMs: number): CheckResult {
  const d = a.deployment;
  const subject = `${a.kind} agent Deployment ${d.namespace}/${d.name}`;
  const counts = `${d.readyReplicas}/${d.replicas} replicas ready`;
  const investigate = `see why: kubectl -n ${d.namespace} describe deployment ${d.name}; kubectl -n ${d.namespace} logs deployment/${d.name}`;
  const fail = (message: string, fix = investigate) =>
    problem('agents', subject, 'fail', message, fix);
  if (d.replicas === 0)
    return fail(
      'scaled to 0 replicas',
      `kubectl -n ${d.namespace} scale deployment ${d.name} --replicas=1`,
    );
  if (!a.leaderElect) {
    const ready = a.pods.filter((p) => p.ready).map((p) => p.name);
    if (ready.length === 0) return fail(`not ready (${counts}; leader election off)`);
    return ok('agents', subject, `leader election off; pod ${ready.join(', ')} Ready (${counts})`);
  }
  const leaseRef = `Lease ${d.namespace}/${a.leaseName}`;
  const lease = a.lease;
  if (lease === undefined || lease.holderIdentity === '')
    return fail(
      `${lease === undefined ? `no ${leaseRef}` : `${leaseRef} has no holder`}: no replica leads (${counts})`,
    );
  const holder = lease.holderIdentity;
  const renewed = Date.parse(lease.renewTime);
  const ageS = Number.isNaN(renewed)
    ? undefined
    : Math.max(0, Math.round((nowMs - renewed) / 1000));
  const pod = a.pods.find((p) => p.name === holder);
  const holderLogs = `kubectl -n ${d.namespace} logs ${holder}`;
  if (ageS === undefined || ageS > lease.leaseDurationSeconds)
    return fail(
      `${leaseRef} held by ${holder} but ${ageS === undefined ? 'never renewed' : `not renewed for ${ageOfSeconds(ageS)} (duration ${lease.leaseDurationSeconds}s)`}: the leader is gone or stuck and no standby took over (${counts})`,
      pod === undefined ? investigate : `read the leader's log: ${holderLogs}; ${investigate}`,
    );
  if (pod === undefined)
    return fail(
      `${leaseRef} is held by ${holder}, which is not a pod of this Deployment (another install using the same Lease name? set leaderElection.leaseName)`,
      `kubectl -n ${d.namespace} get lease ${a.leaseName} -o yaml; ${investigate}`,
    );
  if (!pod.ready)
    return fail(
      `leader ${holder} holds ${leaseRef} but is not Ready (${counts})`,
      `kubectl -n ${d.namespace} describe pod ${holder}; ${holderLogs}`,
    );
  return ok(
    'agents',
    subject,
    `leader ${holder} (Ready), ${leaseRef} renewed ${ageOfSeconds(ageS)} ago; ${counts}`,
  );
}

function checkHealth(h: HealthProbe): CheckResult {
  const subject = `agent ${h.url}`;
  if ('error' in h.readyz)
    return problem(
      'agents',
      subject,
      'fail',
      `not reachable: ${h.readyz.error}`,
      'start the agent, or check the --agents-url (the agent health port)',
    );
  if (h.readyz.status === 200) return ok('agents', subject, '/readyz ok');
  return problem(
    'agents',
    subject,
    'fail',
    `/readyz answered ${h.readyz.status}${h.readyz.body === '' ? '' : `: ${h.readyz.body.trim().slice(0, 300)}`}`,
    "read the agent's log; it is not ready until its caches synced, its ClusterProperties are valid and Cloud Map answered",
  );
}

export function checkAgents(
  agents: readonly AgentFacts[],
  health: readonly HealthProbe[],
  nowMs: number,
): CheckResult[] {
  const results = [...agents.map((a) => checkLeader(a, nowMs)), ...health.map(checkHealth)];
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
