/**
 * Cloud Map reachable with the permissions each agent's policy grants: its read calls,
 * probed through the core port (with the agent's role when doctor could assume it). A
 * NotFound answer proves the call is permitted; doctor never writes, so write permissions
 * (export agent) are only listed.
 */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import { isCloudMapError } from '@cloudmap-mcs/core';
import type { AgentKind } from './agents.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export type ProbeOutcome =
  | { kind: 'ok' }
  | { kind: 'denied'; message: string }
  | { kind: 'unreachable'; message: string }
  | { kind: 'error'; message: string };

export interface Probe {
  /** The Cloud Map API action, as in an IAM policy (`servicediscovery:<action>`). */
  action: ReadAction;
  outcome: ProbeOutcome;
}

export type ReadAction =
  | 'ListNamespaces'
  | 'ListServices'
  | 'DiscoverInstances'
  | 'DiscoverInstancesRevision'
  | 'GetOperation';

/**
 * What each agent's IAM policy grants (deploy/iam/<kind>-agent.json; a unit test keeps the
 * two equal): the reads doctor probes, and the writes it only lists, since it never writes.
 */
export const AGENT_ACTIONS: Record<
  AgentKind,
  { reads: readonly ReadAction[]; writes: readonly string[] }
> = {
  export: {
    reads: [
      'ListNamespaces',
      'ListServices',
      'DiscoverInstances',
      'DiscoverInstancesRevision',
      'GetOperation',
    ],
    // TagResource: Cloud Map authorizes it too when a create carries Tags (the agent's do).
    writes: [
      'CreateHttpNamespace',
      'CreateService',
      'TagResource',
      'RegisterInstance',
      'DeregisterInstance',
    ],
  },
  import: {
    reads: ['ListNamespaces', 'ListServices', 'DiscoverInstances', 'DiscoverInstancesRevision'],
    writes: [],
  },
};

const NOT_FOUND = new Set([
  'NamespaceNotFound',
  'ServiceNotFound',
  'InstanceNotFound',
  'OperationNotFound',
  'InvalidInput',
]);

function classify(e: unknown): ProbeOutcome {
  const message = e instanceof Error ? e.message : String(e);
  if (isCloudMapError(e)) {
    if (NOT_FOUND.has(e.code)) return { kind: 'ok' };
    if (e.code === 'AccessDeniedException') return { kind: 'denied', message };
    if (e.code === 'Unknown' || e.code === 'ServiceUnavailable')
      return { kind: 'unreachable', message: causeChain(e) };
    return { kind: 'error', message: `${e.code}: ${message}` };
  }
  return { kind: 'unreachable', message: causeChain(e) };
}

function causeChain(e: unknown): string {
  const parts: string[] = [];
  for (let cur: unknown = e; cur instanceof Error && parts.length < 4; cur = cur.cause)
    parts.push(cur.message);
  return parts.length === 0 ? String(e) : parts.join(': ');
}

async function attempt(call: () => Promise<unknown>): Promise<ProbeOutcome> {
  try {
    await call();
    return { kind: 'ok' };
  } catch (e) {
    return classify(e);
  }
}

const PROBE_NAME = 'cloudmap-mcs-doctor-probe';

/**
 * Runs the given read calls (ListNamespaces always, first); stops there when Cloud Map cannot
 * be reached.
 */
export async function probeCloudMap(
  port: CloudMapPort,
  actions: readonly ReadAction[],
): Promise<Probe[]> {
  let namespace: { id: string; name: string } | undefined;
  const list = await attempt(async () => {
    namespace = (await port.listNamespaces())[0];
  });
  const probes: Probe[] = [{ action: 'ListNamespaces', outcome: list }];
  if (list.kind === 'unreachable') return probes;
  let service: { id: string; name: string } | undefined;
  const nsName = () => namespace?.name ?? PROBE_NAME;
  const svcName = () => service?.name ?? PROBE_NAME;
  const calls: Record<Exclude<ReadAction, 'ListNamespaces'>, () => Promise<unknown>> = {
    ListServices: async () => {
      service = (await port.listServices(namespace?.id ?? `ns-${PROBE_NAME}`))[0];
    },
    DiscoverInstances: () => port.discoverInstances(nsName(), svcName()),
    DiscoverInstancesRevision: () => port.discoverInstancesRevision(nsName(), svcName()),
    GetOperation: () => port.getOperation(PROBE_NAME),
  };
  for (const action of actions)
    if (action !== 'ListNamespaces') probes.push({ action, outcome: await attempt(calls[action]) });
  return probes;
}

/**
 * Results for the probes (pure). `endpoint` names where Cloud Map was reached; `roleArn` the
 * role the probes ran as (absent: the operator's own credentials), named in a denial.
 */
export function checkCloudMap(
  probes: readonly Probe[] | undefined,
  endpoint: string,
  kind: AgentKind,
  roleArn?: string,
): CheckResult[] {
  const subject = 'Cloud Map';
  if (probes === undefined)
    return [
      problem(
        'cloudmap',
        subject,
        'fail',
        'not configured: no AWS region',
        'set AWS_REGION (and AWS_ENDPOINT_URL_SERVICEDISCOVERY for a local emulator), or pass --region and --cloudmap-endpoint',
      ),
    ];
  const unreachable = probes.find((p) => p.outcome.kind === 'unreachable');
  if (unreachable !== undefined && unreachable.outcome.kind === 'unreachable')
    return [
      problem(
        'cloudmap',
        subject,
        'fail',
        `unreachable at ${endpoint}: ${unreachable.outcome.message}`,
        'check the endpoint, region, network and credentials (AWS_REGION, AWS_ENDPOINT_URL_SERVICEDISCOVERY, AWS_PROFILE / AWS_ACCESS_KEY_ID)',
      ),
    ];
  const writes = AGENT_ACTIONS[kind].writes;
  return probes.map((p) => {
    const s = `Cloud Map servicediscovery:${p.action} (${kind} agent)`;
    const who = `granted to the ${kind} agent`;
    switch (p.outcome.kind) {
      case 'ok':
        return ok(
          'cloudmap',
          s,
          p === probes[probes.length - 1] && writes.length > 0
            ? `permitted (${who}; writes ${writes.join(', ')} are not probed: doctor never writes)`
            : `permitted (${who})`,
        );
      case 'denied':
        return problem(
          'cloudmap',
          s,
          'fail',
          `denied to ${roleArn ?? 'your credentials'} (the ${kind} agent needs it): ${p.outcome.message}`,
          `allow servicediscovery:${p.action} in the IAM policy of ${roleArn ?? `the ${kind} agent's role`} (deploy/iam/${kind}-agent.json)`,
        );
      default:
        return problem(
          'cloudmap',
          s,
          'fail',
          `failed (${who}): ${p.outcome.message}`,
          'retry; if it persists, check Cloud Map service health and the credentials in use',
        );
    }
  });
}
