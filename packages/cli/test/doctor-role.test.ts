import { createFakeCloudMap } from '@cloudmap-mcs/core/testing';
import { describe, expect, it } from 'vitest';
import { agentRole, checkAgentRole } from '../src/doctor/agent-role.js';
import { runDoctor, type DoctorDeps } from '../src/doctor/run.js';
import { agentDeployment, agentLease, agentPod, fakeKube } from './helpers/fake-kube.js';

const NOW = Date.parse('2026-12-05T08:00:00Z');
const NS = 'cloudmap-mcs-system';
const ROLE = 'arn:aws:iam::111122223333:role/cloudmap-mcs-import';
const sa = (kind: 'export' | 'import', annotations: Record<string, string> = {}) => ({
  namespace: NS,
  name: `cloudmap-mcs-${kind}-agent`,
  annotations,
});

describe('agentRole', () => {
  const d = agentDeployment('import');
  it('prefers the flag, then assumeRoleArn, then the IRSA annotation', () => {
    const irsa = sa('import', { 'eks.amazonaws.com/role-arn': ROLE });
    expect(agentRole('import', 'arn:flag', d, irsa, [])).toMatchObject({
      source: 'flag',
      roleArn: 'arn:flag',
    });
    const assume = agentDeployment('import', {
      MCS_ASSUME_ROLE_ARN: 'arn:cross',
      MCS_ASSUME_ROLE_EXTERNAL_ID: 'ext',
    });
    expect(agentRole('import', undefined, assume, irsa, [])).toMatchObject({
      source: 'assume-role-arn',
      roleArn: 'arn:cross',
      externalId: 'ext',
    });
    expect(agentRole('import', undefined, d, irsa, [])).toMatchObject({
      source: 'irsa',
      roleArn: ROLE,
      where: `eks.amazonaws.com/role-arn of ServiceAccount ${NS}/cloudmap-mcs-import-agent`,
    });
  });

  it('recognises Pod Identity, whose role the cluster does not show', () => {
    const pods = [agentPod('import', 'p', true, ['AWS_CONTAINER_CREDENTIALS_FULL_URI'])];
    const role = agentRole('import', undefined, d, sa('import'), pods);
    expect(role).toMatchObject({ source: 'pod-identity' });
    expect(role.roleArn).toBeUndefined();
    const r = checkAgentRole(role, { assumed: false });
    expect(r.status).toBe('warn');
    expect(r.message).toContain('EKS Pod Identity');
    expect(r.message).toContain('probing with your own credentials instead');
    expect(r.fix).toContain('--import-role-arn');
  });

  it('says it probes with your credentials when no role is named', () => {
    expect(
      checkAgentRole(agentRole('export', undefined, d, sa('export'), []), { assumed: false }),
    ).toMatchObject({
      status: 'ok',
      message: expect.stringMatching(/^no role named \(Deployment /),
    });
    expect(
      checkAgentRole(agentRole('export', undefined, undefined, undefined, []), { assumed: false })
        .message,
    ).toBe(
      'no export agent Deployment to read a role from (agents run as local processes use the credentials of their environment); probing with your own credentials',
    );
  });

  it('says when the role cannot be assumed and that it falls back', () => {
    const role = agentRole(
      'import',
      undefined,
      d,
      sa('import', { 'eks.amazonaws.com/role-arn': ROLE }),
      [],
    );
    const r = checkAgentRole(role, { assumed: false, error: 'AssumeRole failed: AccessDenied' });
    expect(r).toMatchObject({ status: 'warn' });
    expect(r.message).toBe(
      `cannot assume ${ROLE} (from eks.amazonaws.com/role-arn of ServiceAccount ${NS}/cloudmap-mcs-import-agent) with your credentials: AssumeRole failed: AccessDenied; probing with your own credentials instead, which may allow what the agent's role does not (or the reverse)`,
    );
    expect(checkAgentRole(role, { assumed: true })).toMatchObject({
      status: 'ok',
      message: `probing as ${ROLE} (from eks.amazonaws.com/role-arn of ServiceAccount ${NS}/cloudmap-mcs-import-agent)`,
    });
  });
});

function deps(overrides: Partial<DoctorDeps> = {}): DoctorDeps {
  return {
    kube: fakeKube({
      deployments: [agentDeployment('export'), agentDeployment('import')],
      pods: [
        agentPod('export', 'export-a'),
        agentPod('export', 'export-b'),
        agentPod('import', 'import-a'),
        agentPod('import', 'import-b', false),
      ],
      leases: [
        agentLease('export', 'export-a', NOW - 3000),
        agentLease('import', 'import-b', NOW - 1000),
      ],
      serviceAccounts: [sa('export'), sa('import', { 'eks.amazonaws.com/role-arn': ROLE })],
    }),
    cloudMap: { port: createFakeCloudMap(), endpoint: 'http://emulator' },
    fetchReadyz: async () => ({ error: 'unused' }),
    agentUrls: [],
    coredns: { namespace: 'kube-system', configMap: 'coredns' },
    now: () => NOW,
    ...overrides,
  };
}

describe('runDoctor', () => {
  it('names each Lease holder, and fails the agent whose holder is not Ready', async () => {
    const agents = (await runDoctor(deps())).filter((r) => r.group === 'agents');
    expect(agents.map((r) => `${r.status} ${r.message}`)).toEqual([
      `ok leader export-a (Ready), Lease ${NS}/cloudmap-mcs-export-agent renewed 3s ago; 2/2 replicas ready`,
      `fail leader import-b holds Lease ${NS}/cloudmap-mcs-import-agent but is not Ready (2/2 replicas ready)`,
    ]);
  });

  it("probes as the agent's IRSA role when it can be assumed, with only its policy's reads", async () => {
    const asRole = createFakeCloudMap();
    const assumed: string[] = [];
    const results = await runDoctor(
      deps({
        actAs: async (role) => {
          assumed.push(role.roleArn);
          return { port: asRole, endpoint: `emulator as ${role.roleArn}` };
        },
      }),
    );
    expect(assumed).toEqual([ROLE]);
    const cm = results.filter((r) => r.group === 'cloudmap');
    expect(cm.map((r) => `${r.status} ${r.subject}`)).toEqual([
      'ok Cloud Map identity (export agent)',
      'ok Cloud Map servicediscovery:ListNamespaces (export agent)',
      'ok Cloud Map servicediscovery:ListServices (export agent)',
      'ok Cloud Map servicediscovery:DiscoverInstances (export agent)',
      'ok Cloud Map servicediscovery:DiscoverInstancesRevision (export agent)',
      'ok Cloud Map servicediscovery:GetOperation (export agent)',
      'ok Cloud Map identity (import agent)',
      'ok Cloud Map servicediscovery:ListNamespaces (import agent)',
      'ok Cloud Map servicediscovery:ListServices (import agent)',
      'ok Cloud Map servicediscovery:DiscoverInstances (import agent)',
      'ok Cloud Map servicediscovery:DiscoverInstancesRevision (import agent)',
    ]);
    // The import agent's reads went to the assumed role's client.
    expect(asRole.calls('discoverInstancesRevision')).toBe(1);
    expect(cm[0]?.message).toContain('no role named');
  });

  it("fails naming the action the agent's role lacks", async () => {
    const asRole = createFakeCloudMap();
    asRole.failAlways('discoverInstances', 'AccessDeniedException', { message: 'not authorized' });
    const results = await runDoctor(
      deps({ actAs: async () => ({ port: asRole, endpoint: 'as role' }) }),
    );
    const bad = results.filter((r) => r.group === 'cloudmap' && r.status === 'fail');
    expect(bad.map((r) => r.subject)).toEqual([
      'Cloud Map servicediscovery:DiscoverInstances (import agent)',
    ]);
    // The role it ran as, from the ServiceAccount's IRSA annotation, is named.
    expect(bad[0]?.message).toBe(`denied to ${ROLE} (the import agent needs it): not authorized`);
    expect(bad[0]?.fix).toBe(
      `allow servicediscovery:DiscoverInstances in the IAM policy of ${ROLE} (deploy/iam/import-agent.json)`,
    );
  });

  it('falls back to the operator credentials, saying so, when the role cannot be assumed', async () => {
    const operator = createFakeCloudMap();
    const results = await runDoctor(
      deps({
        cloudMap: { port: operator, endpoint: 'http://emulator' },
        actAs: async () => {
          throw new Error('AssumeRole failed: AccessDenied');
        },
      }),
    );
    const identity = results.find((r) => r.subject === 'Cloud Map identity (import agent)');
    expect(identity?.status).toBe('warn');
    expect(identity?.message).toContain('AssumeRole failed: AccessDenied');
    expect(operator.calls('discoverInstancesRevision')).toBe(2);
  });

  it('reports an unreachable Cloud Map once', async () => {
    const cm = createFakeCloudMap();
    cm.failAlways('listNamespaces', 'Unknown', { message: 'connect ECONNREFUSED' });
    const results = await runDoctor(deps({ cloudMap: { port: cm, endpoint: 'http://x' } }));
    expect(results.filter((r) => r.group === 'cloudmap').map((r) => r.subject)).toEqual([
      'Cloud Map identity (export agent)',
      'Cloud Map',
    ]);
  });
});
