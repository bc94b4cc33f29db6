import { describe, expect, it } from 'vitest';
import type { AgentFacts } from '../src/doctor/agents.js';
import { agentKind, checkAgents, leaseNameOf } from '../src/doctor/agents.js';
import type { DeploymentInfo, LeaseInfo, PodInfo } from '../src/kube/objects.js';

const NOW = Date.parse('2026-12-05T08:00:00Z');
const NS = 'cloudmap-mcs-system';

const deploy = (
  name: string,
  ready: number,
  replicas = 1,
  labels: Record<string, string> = {},
  env: Record<string, string> = {},
): DeploymentInfo => ({
  namespace: NS,
  name,
  labels,
  images: [],
  replicas,
  readyReplicas: ready,
  availableReplicas: ready,
  serviceAccountName: name,
  env,
  selector: { app: name },
});

const pod = (name: string, ready: boolean): PodInfo => ({
  namespace: NS,
  name,
  labels: {},
  ready,
  phase: 'Running',
  envNames: [],
  containers: ['agent'],
  metricsPort: 8081,
});

const lease = (holder: string, renewedSecondsAgo = 2): LeaseInfo => ({
  namespace: NS,
  name: 'cloudmap-mcs-export-agent',
  holderIdentity: holder,
  renewTime: new Date(NOW - renewedSecondsAgo * 1000).toISOString(),
  leaseDurationSeconds: 15,
});

function agent(overrides: Partial<AgentFacts> = {}): AgentFacts {
  const d = deploy('cloudmap-mcs-export-agent', 2, 2);
  return {
    kind: 'export',
    deployment: d,
    pods: [pod('export-a', true), pod('export-b', true)],
    leaderElect: true,
    leaseName: leaseNameOf('export', d),
    lease: lease('export-b'),
    ...overrides,
  };
}

const check = (a: AgentFacts) => checkAgents([a], [], NOW)[0];

describe('agentKind', () => {
  it('recognises agents by name or label', () => {
    expect(agentKind(deploy('cloudmap-mcs-export-agent', 1))).toBe('export');
    expect(agentKind(deploy('x', 1, 1, { 'app.kubernetes.io/component': 'import-agent' }))).toBe(
      'import',
    );
    expect(agentKind(deploy('coredns', 1))).toBeUndefined();
  });

  it('takes the Lease name from MCS_LEASE_NAME, else the agent default', () => {
    expect(leaseNameOf('import', deploy('x', 1))).toBe('cloudmap-mcs-import-agent');
    expect(leaseNameOf('import', deploy('x', 1, 1, {}, { MCS_LEASE_NAME: 'mine' }))).toBe('mine');
  });
});

describe('checkAgents: the leader', () => {
  it('names the Lease holder and says it is Ready', () => {
    expect(check(agent())).toEqual({
      group: 'agents',
      subject: `export agent Deployment ${NS}/cloudmap-mcs-export-agent`,
      status: 'ok',
      message: `leader export-b (Ready), Lease ${NS}/cloudmap-mcs-export-agent renewed 2s ago; 2/2 replicas ready`,
    });
  });

  it('fails when the holder is not Ready, even with another replica Ready', () => {
    const r = check(agent({ pods: [pod('export-a', true), pod('export-b', false)] }));
    expect(r).toMatchObject({
      status: 'fail',
      message: `leader export-b holds Lease ${NS}/cloudmap-mcs-export-agent but is not Ready (2/2 replicas ready)`,
    });
    expect(r?.fix).toContain(`kubectl -n ${NS} logs export-b`);
  });

  it('fails when the Lease is missing, has no holder, or was not renewed within its duration', () => {
    expect(check(agent({ lease: undefined }))?.message).toBe(
      `no Lease ${NS}/cloudmap-mcs-export-agent: no replica leads (2/2 replicas ready)`,
    );
    expect(check(agent({ lease: lease('') }))?.message).toContain('has no holder');
    const stale = check(agent({ lease: lease('export-b', 40) }));
    expect(stale?.status).toBe('fail');
    expect(stale?.message).toContain('held by export-b but not renewed for 40s (duration 15s)');
  });

  it('fails when the holder is no pod of this Deployment', () => {
    const r = check(agent({ lease: lease('someone-else') }));
    expect(r?.status).toBe('fail');
    expect(r?.message).toContain('is held by someone-else, which is not a pod of this Deployment');
  });

  it('fails an agent scaled to zero', () => {
    const d = deploy('cloudmap-mcs-import-agent', 0, 0);
    expect(check(agent({ kind: 'import', deployment: d }))?.fix).toContain('--replicas=1');
  });

  it('without leader election, a Ready pod is the agent', () => {
    expect(check(agent({ leaderElect: false, lease: undefined }))).toMatchObject({
      status: 'ok',
      message: 'leader election off; pod export-a, export-b Ready (2/2 replicas ready)',
    });
    expect(
      check(agent({ leaderElect: false, pods: [pod('export-a', false)], lease: undefined }))
        ?.status,
    ).toBe('fail');
  });
});

describe('checkAgents: coverage', () => {
  it('warns when only one agent runs', () => {
    const r = checkAgents([agent()], [], NOW);
    expect(r.map((x) => `${x.status} ${x.subject}`)).toEqual([
      `ok export agent Deployment ${NS}/cloudmap-mcs-export-agent`,
      'warn import agent',
    ]);
  });

  it('fails when there is no agent at all, pointing at --agents-url for local processes', () => {
    const r = checkAgents([], [], NOW);
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ status: 'fail', message: 'no export or import agent found' });
    expect(r[0]?.fix).toContain('--agents-url');
  });

  it('checks local agents through /readyz', () => {
    const r = checkAgents(
      [],
      [
        { url: 'http://127.0.0.1:1', readyz: { status: 200, body: 'ok' } },
        { url: 'http://127.0.0.1:2', readyz: { status: 503, body: 'cloudmap: not synced' } },
        { url: 'http://127.0.0.1:3', readyz: { error: 'fetch failed (connect ECONNREFUSED)' } },
      ],
      NOW,
    );
    expect(r.map((x) => `${x.status} ${x.message}`)).toEqual([
      'ok /readyz ok',
      'fail /readyz answered 503: cloudmap: not synced',
      'fail not reachable: fetch failed (connect ECONNREFUSED)',
    ]);
  });
});
