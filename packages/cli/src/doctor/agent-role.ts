/**
 * Which AWS role an agent calls Cloud Map with, as far as the cluster shows it (pure), so
 * doctor can probe with that role instead of the operator's own credentials:
 *
 * 1. `--export-role-arn` / `--import-role-arn` (the operator knows best);
 * 2. the chart's `assumeRoleArn` (`MCS_ASSUME_ROLE_ARN` on the Deployment): the agent assumes
 *    it for every Cloud Map call, so its policy is the one that counts;
 * 3. the ServiceAccount's IRSA annotation `eks.amazonaws.com/role-arn`;
 * 4. EKS Pod Identity (the pod carries `AWS_CONTAINER_CREDENTIALS_FULL_URI`): the role lives in
 *    an EKS association, not in the cluster, so doctor cannot name it.
 */
import type { DeploymentInfo, PodInfo, ServiceAccountInfo } from '../kube/objects.js';
import type { AgentKind } from './agents.js';
import type { CheckResult } from './result.js';
import { ok, problem } from './result.js';

export const IRSA_ANNOTATION = 'eks.amazonaws.com/role-arn';

export type RoleSource = 'flag' | 'assume-role-arn' | 'irsa' | 'pod-identity' | 'none';

export interface AgentRole {
  kind: AgentKind;
  source: RoleSource;
  roleArn?: string;
  externalId?: string;
  /** Where it was read, for messages. */
  where: string;
}

export function agentRole(
  kind: AgentKind,
  override: string | undefined,
  deployment: DeploymentInfo | undefined,
  serviceAccount: ServiceAccountInfo | undefined,
  pods: readonly PodInfo[],
): AgentRole {
  const flag = `--${kind}-role-arn`;
  if (override !== undefined && override !== '')
    return { kind, source: 'flag', roleArn: override, where: flag };
  if (deployment === undefined)
    return { kind, source: 'none', where: `no ${kind} agent Deployment` };
  const at = `Deployment ${deployment.namespace}/${deployment.name}`;
  const assume = deployment.env['MCS_ASSUME_ROLE_ARN'];
  if (assume !== undefined && assume !== '') {
    const externalId = deployment.env['MCS_ASSUME_ROLE_EXTERNAL_ID'];
    return {
      kind,
      source: 'assume-role-arn',
      roleArn: assume,
      ...(externalId === undefined || externalId === '' ? {} : { externalId }),
      where: `MCS_ASSUME_ROLE_ARN of ${at} (the chart's assumeRoleArn)`,
    };
  }
  const irsa = serviceAccount?.annotations[IRSA_ANNOTATION];
  if (serviceAccount !== undefined && irsa !== undefined && irsa !== '')
    return {
      kind,
      source: 'irsa',
      roleArn: irsa,
      where: `${IRSA_ANNOTATION} of ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name}`,
    };
  if (pods.some((p) => p.envNames.includes('AWS_CONTAINER_CREDENTIALS_FULL_URI')))
    return { kind, source: 'pod-identity', where: `the pods of ${at}` };
  return { kind, source: 'none', where: at };
}

/** The outcome of trying to act as the agent's role. */
export type RoleAttempt = { assumed: true } | { assumed: false; error?: string };

/** What doctor says about the identity it probed with (pure). */
export function checkAgentRole(role: AgentRole, attempt: RoleAttempt): CheckResult {
  const subject = `Cloud Map identity (${role.kind} agent)`;
  const flag = `--${role.kind}-role-arn`;
  const fallback =
    "probing with your own credentials instead, which may allow what the agent's role does not (or the reverse)";
  if (role.roleArn !== undefined) {
    if (attempt.assumed)
      return ok('cloudmap', subject, `probing as ${role.roleArn} (from ${role.where})`);
    return problem(
      'cloudmap',
      subject,
      'warn',
      `cannot assume ${role.roleArn} (from ${role.where}) with your credentials${attempt.error === undefined ? '' : `: ${attempt.error}`}; ${fallback}`,
      `run doctor with credentials the role trusts (its trust policy lists the agent's OIDC subject, so add your principal or run from a principal it trusts), or check the role's policy against deploy/iam/${role.kind}-agent.json`,
    );
  }
  if (role.source === 'pod-identity')
    return problem(
      'cloudmap',
      subject,
      'warn',
      `the agent gets its role from EKS Pod Identity (${role.where}), which the cluster does not name; ${fallback}`,
      `name the role: ${flag} <arn> (aws eks list-pod-identity-associations --cluster-name <cluster>)`,
    );
  if (role.where.startsWith('no '))
    return ok(
      'cloudmap',
      subject,
      `${role.where} to read a role from (agents run as local processes use the credentials of their environment); probing with your own credentials`,
    );
  return ok(
    'cloudmap',
    subject,
    `no role named (${role.where}: no assumeRoleArn, no ${IRSA_ANNOTATION} annotation, no Pod Identity; the agent uses its pod's default credential chain); probing with your own credentials`,
  );
}
