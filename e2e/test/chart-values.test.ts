// The values the harness installs the chart with (e2e/src/helm/chart.ts, used by `make demo`
// and the realnodes chart suite) render into what the real-node run relies on, and the
// Dockerfiles' runtime user is the chart's. No cluster: `helm template` only.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chartDir,
  chartValues,
  credentialsSecret,
  helmBinary,
  writeValues,
} from '../src/helm/chart.js';
import { dockerfileFacts } from '../src/helm/dockerfile.js';
import type { AgentImages } from '../src/helm/images.js';
import { parseBuildOutput } from '../src/helm/images.js';
import { repoRoot } from '../src/paths.js';
import { execFileSync } from 'node:child_process';

const work = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-chart-values-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const images: AgentImages = {
  'export-agent': {
    agent: 'export-agent',
    reference: 'cloudmap-mcs.local/export-agent:abc123',
    repository: 'cloudmap-mcs.local/export-agent',
    tag: 'abc123',
    archive: '/dev/null',
    bytes: 0,
  },
  'import-agent': {
    agent: 'import-agent',
    reference: 'cloudmap-mcs.local/import-agent:def456',
    repository: 'cloudmap-mcs.local/import-agent',
    tag: 'def456',
    archive: '/dev/null',
    bytes: 0,
  },
};

function render(values: Record<string, unknown>): V1Deployment[] {
  const file = writeValues(work, 'v', values);
  const out = execFileSync(
    helmBinary(),
    ['template', 'mcs', chartDir(), '--namespace', 'cloudmap-mcs', '-f', file],
    {
      encoding: 'utf8',
      env: { ...process.env, HELM_CACHE_HOME: work, HELM_CONFIG_HOME: work, HELM_DATA_HOME: work },
    },
  );
  return (loadAllYaml(out) as { kind?: string }[]).filter(
    (o): o is V1Deployment => o?.kind === 'Deployment',
  );
}

describe('chartValues (the values file of the real-node runs)', () => {
  const values = chartValues({
    images,
    exportAgent: false,
    importAgent: true,
    cloudMapEndpoint: 'http://172.16.2.1:40000',
    region: 'us-east-1',
    allowedCidrs: ['10.1.0.0/16', '10.2.0.0/16'],
    allowedNamespaces: ['chart-x'],
  });

  it('renders an import-only release with the endpoint, region and credentials a user gives', () => {
    const deps = render(values);
    expect(deps.map((d) => d.metadata?.name)).toEqual(['mcs-cloudmap-mcs-import-agent']);
    const c = deps[0]!.spec!.template.spec!.containers[0]!;
    expect(c.image).toBe('cloudmap-mcs.local/import-agent:def456');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    expect(env['AWS_ENDPOINT_URL_SERVICEDISCOVERY']?.value).toBe('http://172.16.2.1:40000');
    expect(env['AWS_REGION']?.value).toBe('us-east-1');
    expect(env['MCS_ALLOWED_CIDRS']?.value).toBe('10.1.0.0/16,10.2.0.0/16');
    expect(env['MCS_ALLOWED_NAMESPACES']?.value).toBe('chart-x');
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      expect(env[key]?.valueFrom?.secretKeyRef).toEqual({ name: credentialsSecret, key });
    expect(deps[0]!.spec!.replicas).toBe(2);
  });

  it('merges extra values without dropping the images or credentials', () => {
    const deps = render(
      chartValues({
        images,
        exportAgent: true,
        importAgent: true,
        cloudMapEndpoint: 'http://172.16.1.1:40000',
        region: 'us-east-1',
        allowedCidrs: ['10.1.0.0/16'],
        replicas: 1,
        extra: { logLevel: 'debug', exportAgent: { registerRate: 10 } },
        testTimings: { exportAgent: { heartbeatSeconds: 10 } },
      }),
    );
    expect(deps.map((d) => d.metadata?.name).sort()).toEqual([
      'mcs-cloudmap-mcs-export-agent',
      'mcs-cloudmap-mcs-import-agent',
    ]);
    for (const d of deps) {
      const c = d.spec!.template.spec!.containers[0]!;
      const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
      expect(env['MCS_LOG_LEVEL']?.value).toBe('debug');
      expect(env['AWS_ACCESS_KEY_ID']?.valueFrom?.secretKeyRef?.name).toBe(credentialsSecret);
      expect(d.spec!.replicas).toBe(1);
    }
    const exp = deps.find((d) => d.metadata?.name?.includes('export'))!;
    const env = exp.spec!.template.spec!.containers[0]!.env ?? [];
    expect(env.find((e) => e.name === 'MCS_REGISTER_RATE')?.value).toBe('10');
    expect(env.find((e) => e.name === 'MCS_TEST_TIMINGS')?.value).toBe('{"heartbeatSeconds":10}');
    // The timings go with the credentials, not instead of them.
    expect(env.find((e) => e.name === 'AWS_ACCESS_KEY_ID')?.valueFrom?.secretKeyRef?.name).toBe(
      credentialsSecret,
    );
    expect(exp.spec!.template.spec!.containers[0]!.image).toBe(
      'cloudmap-mcs.local/export-agent:abc123',
    );
  });
});

describe('Dockerfiles and chart agree on the runtime user', () => {
  it.each(['Dockerfile.export', 'Dockerfile.import'])('%s', (file) => {
    const facts = dockerfileFacts(readFileSync(join(repoRoot(), file), 'utf8'));
    const chart = readFileSync(join(repoRoot(), 'deploy/charts/cloudmap-mcs/values.yaml'), 'utf8');
    const [uid, gid] = facts.user.split(':');
    expect(chart).toMatch(new RegExp(`runAsUser: ${uid}\\b`));
    expect(chart).toMatch(new RegExp(`runAsGroup: ${gid}\\b`));
    expect(facts.entrypoint[0]).toBe('node');
    expect(facts.copy.dest).toBe('/app');
  });
});

describe('parseBuildOutput', () => {
  it('needs both images and refuses other lines', () => {
    const f = join(work, 'a.tar');
    writeFileSync(f, 'x');
    const ok = parseBuildOutput(
      `export-agent cloudmap-mcs.local/export-agent:k1 ${f}\nimport-agent cloudmap-mcs.local/import-agent:k2 ${f}\n`,
    );
    expect(ok['import-agent'].tag).toBe('k2');
    expect(ok['export-agent'].repository).toBe('cloudmap-mcs.local/export-agent');
    expect(() =>
      parseBuildOutput(`export-agent cloudmap-mcs.local/export-agent:k1 ${f}\n`),
    ).toThrow(/both images/);
    expect(() => parseBuildOutput('images: progress\n')).toThrow(/unexpected line/);
  });
});
