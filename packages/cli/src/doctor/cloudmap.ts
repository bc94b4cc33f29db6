/**
 * Cloud Map reachable with the permissions the agents need: the read calls each agent makes,
 * probed through the core port. A NotFound answer proves the call is permitted; doctor never
 * writes, so write permissions (export agent) are only listed.
 */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import { isCloudMapError } from '@cloudmap-mcs/core';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export type ProbeOutcome =
  | { kind: 'ok' }
  | { kind: 'denied'; message: string }
  | { kind: 'unreachable'; message: string }
  | { kind: 'error'; message: string };

export interface Probe {
  /** The Cloud Map API action, as in an IAM policy (`servicediscovery:<action>`). */
  action: string;
  agents: ('export' | 'import')[];
  outcome: ProbeOutcome;
}

/** Actions the agents call that doctor does not probe because they write. */
const WRITE_ACTIONS = [
  'CreateHttpNamespace',
  'CreateService',
  'RegisterInstance',
  'DeregisterInstance',
] as const;

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

/** Runs the read calls; stops after ListNamespaces when Cloud Map cannot be reached. */
export async function probeCloudMap(port: CloudMapPort): Promise<Probe[]> {
  let namespace: { id: string; name: string } | undefined;
  const list = await attempt(async () => {
    namespace = (await port.listNamespaces())[0];
  });
  const probes: Probe[] = [
    { action: 'ListNamespaces', agents: ['export', 'import'], outcome: list },
  ];
  if (list.kind === 'unreachable') return probes;
  let service: { id: string; name: string } | undefined;
  probes.push({
    action: 'ListServices',
    agents: ['export', 'import'],
    outcome: await attempt(async () => {
      service = (await port.listServices(namespace?.id ?? `ns-${PROBE_NAME}`))[0];
    }),
  });
  const nsName = namespace?.name ?? PROBE_NAME;
  const svcName = service?.name ?? PROBE_NAME;
  probes.push(
    {
      action: 'DiscoverInstances',
      agents: ['export', 'import'],
      outcome: await attempt(() => port.discoverInstances(nsName, svcName)),
    },
    {
      action: 'DiscoverInstancesRevision',
      agents: ['import'],
      outcome: await attempt(() => port.discoverInstancesRevision(nsName, svcName)),
    },
    {
      action: 'ListInstances',
      agents: ['export'],
      outcome: await attempt(() => port.listInstances(service?.id ?? `srv-${PROBE_NAME}`)),
    },
    {
      action: 'GetOperation',
      agents: ['export'],
      outcome: await attempt(() => port.getOperation(PROBE_NAME)),
    },
  );
  return probes;
}

/** Results for the probes (pure). `endpoint` names where Cloud Map was reached. */
export function checkCloudMap(
  probes: readonly Probe[] | undefined,
  endpoint: string,
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
  return probes.map((p) => {
    const s = `Cloud Map servicediscovery:${p.action}`;
    const who = `needed by the ${p.agents.join(' and ')} agent${p.agents.length > 1 ? 's' : ''}`;
    switch (p.outcome.kind) {
      case 'ok':
        return ok(
          'cloudmap',
          s,
          p.action === 'GetOperation'
            ? `permitted (${who}; writes ${WRITE_ACTIONS.join(', ')} are not probed: doctor never writes)`
            : `permitted (${who})`,
        );
      case 'denied':
        return problem(
          'cloudmap',
          s,
          'fail',
          `denied (${who}): ${p.outcome.message}`,
          `allow servicediscovery:${p.action} in the IAM policy of the agent's role`,
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
