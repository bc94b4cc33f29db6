import { describe, expect, it } from 'vitest';
import { checkAgents } from '../src/doctor/agents.js';
import type { DeploymentInfo } from '../src/kube/objects.js';

const deploy = (
  name: string,
  ready: number,
  replicas = 1,
  labels: Record<string, string> = {},
): DeploymentInfo => ({
  namespace: 'cloudmap-mcs-system',
  name,
  labels,
  images: [],
  replicas,
  readyReplicas: ready,
  availableReplicas: ready,
});

describe('checkAgents', () => {
  it('recognises agents by name or label', () => {
    // The kind found names the Deployment's check and the other kind's warning; no kind, no agent.
    const seen = (d: DeploymentInfo) => checkAgents([d], []).map((x) => `${x.status} ${x.subject}`);
    expect(seen(deploy('cloudmap-mcs-export-agent', 1))).toEqual([
      'ok export agent Deployment cloudmap-mcs-system/cloudmap-mcs-export-agent',
      'warn import agent',
    ]);
    expect(seen(deploy('x', 1, 1, { 'app.kubernetes.io/component': 'import-agent' }))).toEqual([
      'ok import agent Deployment cloudmap-mcs-system/x',
      'warn export agent',
    ]);
    expect(seen(deploy('coredns', 1))).toEqual(['fail agents']);
  });

  it('passes with both agents ready', () => {
    const r = checkAgents(
      [deploy('cloudmap-mcs-export-agent', 1), deploy('cloudmap-mcs-import-agent', 2, 2)],
      [],
    );
    expect(r.map((x) => `${x.status} ${x.message}`)).toEqual([
      'ok 1/1 replicas ready',
      'ok 2/2 replicas ready',
    ]);
  });

  it('fails an unready agent with the commands to investigate', () => {
    const [r] = checkAgents(
      [deploy('cloudmap-mcs-export-agent', 0), deploy('cloudmap-mcs-import-agent', 1)],
      [],
    );
    expect(r).toMatchObject({ status: 'fail', message: 'not ready (0/1 replicas ready)' });
    expect(r?.fix).toContain(
      'kubectl -n cloudmap-mcs-system logs deployment/cloudmap-mcs-export-agent',
    );
  });

  it('fails an agent scaled to zero', () => {
    const [r] = checkAgents([deploy('cloudmap-mcs-import-agent', 0, 0)], []);
    expect(r?.fix).toContain('--replicas=1');
  });

  it('warns when only one agent runs', () => {
    const r = checkAgents([deploy('cloudmap-mcs-import-agent', 1)], []);
    expect(r.map((x) => `${x.status} ${x.subject}`)).toEqual([
      'ok import agent Deployment cloudmap-mcs-system/cloudmap-mcs-import-agent',
      'warn export agent',
    ]);
  });

  it('fails when there is no agent at all, pointing at --agents-url for local processes', () => {
    const r = checkAgents([deploy('coredns', 1)], []);
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
    );
    expect(r.map((x) => `${x.status} ${x.message}`)).toEqual([
      'ok /readyz ok',
      'fail /readyz answered 503: cloudmap: not synced',
      'fail not reachable: fetch failed (connect ECONNREFUSED)',
    ]);
  });
});
