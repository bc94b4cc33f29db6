import { describe, expect, it } from 'vitest';
import { agentArgs, demoAgentEnv } from '../../src/demo/agents.js';
import { renderSummary, type SummaryInput } from '../../src/demo/summary.js';
import type { ClusterObservation } from '../../src/demo/verify.js';

const obs = (cluster: string, ip: string): ClusterObservation => ({
  cluster,
  exportedEndpoints: 2,
  exportedFamilies: ['IPv4'],
  exportConditions: { Valid: 'True', Ready: 'True', Conflict: 'False' },
  serviceImport: { type: 'ClusterSetIP', ips: [ip], clusters: ['c1', 'c2'] },
  importedEndpoints: { c2: { IPv4: 2 }, c1: { IPv4: 2 } },
  derivedServiceIp: ip,
});

const input: SummaryInput = {
  namespace: 'demo',
  service: 'hello',
  elapsedSeconds: 61.4,
  observations: [obs('c1', '10.101.0.10'), obs('c2', '10.102.0.20')],
  records: {
    instances: 6,
    clusters: [
      { cluster: 'c1', hasExportRecord: true, endpoints: ['10.1.0.2:8080', '10.1.0.3:8080'] },
      { cluster: 'c2', hasExportRecord: true, endpoints: ['10.2.0.2:8080', '10.2.0.3:8080'] },
    ],
    heartbeats: [
      { cluster: 'c1', ageSeconds: 3 },
      { cluster: 'c2', ageSeconds: 1 },
    ],
  },
  dns: {
    server: '127.0.0.1:40001',
    name: 'hello.demo',
    a: ['10.1.0.2', '10.1.0.3', '10.2.0.2', '10.2.0.3'],
    aaaa: [],
    srv: ['c1-tcp-10_1_0_2-80.hello.demo:8080'],
  },
  cloudMapUrl: 'http://127.0.0.1:40000',
  stateDir: '.state/demo',
  kubeconfigs: [
    { cluster: 'c1', path: '.state/demo/c1.kubeconfig' },
    { cluster: 'c2', path: '.state/demo/c2.kubeconfig' },
  ],
  agentUrls: [{ cluster: 'c1', urls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] }],
  doctor: [
    { cluster: 'c1', ok: true, detail: '' },
    { cluster: 'c2', ok: true, detail: '' },
  ],
  cli: 'packages/cli/dist/src/main.js',
  interactive: true,
};

describe('renderSummary', () => {
  it('says what was exported, what each cluster imported, the records and how to explore', () => {
    const text = renderSummary(input);
    expect(text).toContain('ready in 61 s');
    expect(text).toContain('Exported   demo/hello from c1 (2 pods) and c2 (2 pods)\n');
    expect(text).toContain(
      '           ServiceExport Valid=True Ready=True Conflict=False in both\n',
    );
    expect(text).toContain(
      '  c1  ServiceImport demo/hello  ClusterSetIP 10.101.0.10  clusters [c1, c2]  endpoints: 2 from c1, 2 from c2',
    );
    expect(text).toContain('  c2  ServiceImport demo/hello  ClusterSetIP 10.102.0.20');
    expect(text).toContain('namespace demo, service hello: 6 instances');
    expect(text).toContain(
      '  c2  export record + 2 endpoint instances: 10.2.0.2:8080 10.2.0.3:8080',
    );
    expect(text).toContain('heartbeats: c1 (3 s ago), c2 (1 s ago)');
    expect(text).toContain('DNS        hello.demo (private DNS namespace demo');
    expect(text).toContain('  A    10.1.0.2 10.1.0.3 10.2.0.2 10.2.0.3\n');
    expect(text).toContain('  SRV  c1-tcp-10_1_0_2-80.hello.demo:8080\n');
    expect(text).toContain('dig @127.0.0.1 -p 40001 hello.demo SRV');
    expect(text).toContain('Doctor     c1: all checks passed; c2: all checks passed');
    expect(text).toContain('export KUBECONFIG=.state/demo/c1.kubeconfig');
    expect(text).toContain('set -a; . .state/demo/cloudmap.env; set +a');
    expect(text).toContain(
      'node packages/cli/dist/src/main.js doctor --agents-url http://127.0.0.1:1 --agents-url http://127.0.0.1:2',
    );
    expect(text).toContain('Ctrl-C');
  });

  it('lists the export conditions per cluster when they differ', () => {
    const [a, b] = input.observations;
    if (a === undefined || b === undefined) throw new Error('fixture');
    const text = renderSummary({
      ...input,
      observations: [a, { ...b, exportConditions: { ...b.exportConditions, Conflict: 'True' } }],
    });
    expect(text).toContain(
      'ServiceExport c1: Valid=True Ready=True Conflict=False; c2: Valid=True Ready=True Conflict=True',
    );
  });

  it('counts imported endpoints per family on dual stack', () => {
    const dual = (o: ClusterObservation): ClusterObservation => ({
      ...o,
      exportedFamilies: ['IPv4', 'IPv6'],
      importedEndpoints: { c1: { IPv6: 2, IPv4: 2 }, c2: { IPv4: 2, IPv6: 1 } },
    });
    const text = renderSummary({ ...input, observations: input.observations.map(dual) });
    expect(text).toContain('endpoints: 2 IPv4 + 2 IPv6 from c1, 2 IPv4 + 1 IPv6 from c2');
  });

  it('says where each cluster’s Prometheus is (real nodes)', () => {
    expect(renderSummary(input)).not.toContain('Prometheus');
    const text = renderSummary({
      ...input,
      interactive: false,
      prometheus: [
        { cluster: 'c1', url: 'http://127.0.0.1:9001', targets: '2/2 up' },
        { cluster: 'c2', url: 'http://127.0.0.1:9002', targets: '2/2 up' },
      ],
    });
    expect(text).toContain(
      'Prometheus c1: http://127.0.0.1:9001 (targets 2/2 up), c2: http://127.0.0.1:9002 (targets 2/2 up)',
    );
    expect(text).toContain('http://127.0.0.1:9001/api/v1/alerts');
  });

  it('leaves out the exploring hints in CI and shows a failed doctor', () => {
    const text = renderSummary({
      ...input,
      interactive: false,
      doctor: [{ cluster: 'c1', ok: false, detail: 'agents: no export or import agent found' }],
    });
    expect(text).not.toContain('Explore');
    expect(text).not.toContain('Ctrl-C');
    expect(text).toContain('c1: FAILED (agents: no export or import agent found)');
  });
});

describe('agentArgs', () => {
  const cluster = { name: 'c1' };
  it('gives both agents a health port, without leader election', () => {
    for (const kind of ['export', 'import'] as const) {
      expect(agentArgs(kind, { health: 1, metrics: 2 })).toEqual(
        expect.arrayContaining(['--health-port=1', '--leader-elect=false']),
      );
    }
  });
  it('gives the export agent DNS records in a private DNS namespace it creates', () => {
    expect(agentArgs('export', { health: 1, metrics: 2 })).toEqual(
      expect.arrayContaining(['--dns-records', '--dns-namespace-vpc=vpc-demo']),
    );
  });
  it('polls Cloud Map fast in the import agent', () => {
    expect(agentArgs('import', { health: 1, metrics: 2 })).toEqual(
      expect.arrayContaining(['--metrics-port=2', '--poll-fast-seconds=1']),
    );
    expect(demoAgentEnv('import', cluster)).toEqual({
      POD_NAME: 'c1-import-agent',
      MCS_TEST_TIMINGS: '{"pollSlowSeconds":3}',
    });
  });
  it('names the replica and renews the export heartbeat every 10 s', () => {
    expect(demoAgentEnv('export', cluster)).toEqual({
      POD_NAME: 'c1-export-agent',
      MCS_TEST_TIMINGS: '{"heartbeatSeconds":10}',
    });
  });
});
