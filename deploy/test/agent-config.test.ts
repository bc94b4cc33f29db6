// The chart's environment is what the agents actually parse: each Deployment's env (with the
// downward API resolved as the kubelet would) goes through the agent's own config spec, which
// is strict, so a renamed, missing or foreign MCS_* variable fails here.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { V1Deployment } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { helmBinary, render, repoRoot } from './support/helm.js';

beforeAll(() => {
  helmBinary();
});

type Env = Record<string, string>;
type ParseConfig = (argv: string[], env: Env, hostname: string) => unknown;

/**
 * The agent's own config spec, loaded from source (not a copy of its flag list), parsed as
 * runAgent parses it.
 */
async function agentParseConfig(agent: 'export-agent' | 'import-agent'): Promise<ParseConfig> {
  const source = (...path: string[]) => pathToFileURL(join(repoRoot, 'packages', ...path)).href;
  const core = (await import(source('core', 'src', 'agent', 'index.ts'))) as {
    parseAgentConfig: (spec: unknown, ...args: Parameters<ParseConfig>) => Promise<unknown>;
  };
  const specName = agent === 'export-agent' ? 'exportConfigSpec' : 'importConfigSpec';
  const mod = (await import(source(agent, 'src', 'config.ts'))) as Record<string, unknown>;
  const spec = mod[specName];
  if (spec === undefined) throw new Error(`${agent} config.ts has no ${specName}`);
  return (argv, env, hostname) => core.parseAgentConfig(spec, argv, env, hostname);
}

const POD = 'agent-7d9f-abcde';
const POD_IP = '10.244.1.17';

/** The container env as the process sees it: downward-API fields resolved. */
function processEnv(d: V1Deployment): Env {
  const env: Env = {};
  for (const e of d.spec?.template.spec?.containers[0]?.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.name') env[e.name] = POD;
    else if (field === 'metadata.namespace') env[e.name] = d.metadata?.namespace ?? '';
    else if (field === 'status.podIP') env[e.name] = POD_IP;
    else if (e.value !== undefined) env[e.name] = e.value;
    else throw new Error(`unexpected env source for ${e.name}`);
  }
  return env;
}

/**
 * Runs parseConfig with exactly `env` as the MCS_* environment (some agents read it through
 * yargs .env(), i.e. from process.env), restoring process.env afterwards.
 */
async function parseWith(parse: ParseConfig, env: Env): Promise<Record<string, unknown>> {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('MCS_')) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return (await parse([], { ...env }, 'host-1')) as Record<string, unknown>;
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

const deployment = (values: Record<string, unknown>, component: string): V1Deployment => {
  const out = render({ values, namespace: 'mcs-system' });
  expect(out.status, out.stderr).toBe(0);
  const d = out.objects.find(
    (o) =>
      o.kind === 'Deployment' && o.metadata?.labels?.['app.kubernetes.io/component'] === component,
  );
  if (d === undefined) throw new Error(`no ${component} Deployment`);
  return d as V1Deployment;
};

const everything = {
  cluster: { clusterId: 'east-1', clusterSetId: 'prod' },
  aws: {
    region: 'eu-west-1',
    assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
    cloudMapEndpoint: 'http://127.0.0.1:4566',
  },
  logLevel: 'debug',
  healthPort: 9091,
  metrics: { port: 9090 },
  exportAgent: {
    workers: 3,
    resyncSeconds: 90,
    backgroundBudget: 4,
    peerCheckSeconds: 3,
    peerCheckBudget: 40,
    registerRate: 7,
    dns: { records: true, ttlSeconds: 30, namespaceVpc: 'vpc-0abc123' },
    leaderElection: {
      leaseName: 'exp-lease',
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
      retryPeriodSeconds: 4,
    },
  },
  importAgent: {
    workers: 2,
    poll: { feedSeconds: 2, fastSeconds: 3, backgroundBudget: 10 },
    requestBudget: 25,
    heartbeatTtlSeconds: 180,
    allowedCidrs: ['10.0.0.0/8', 'fd00::/8'],
    namespaces: { allowed: ['shop', 'default'], denied: ['kube-system'] },
    maxImportsPerNamespace: 20,
    maxImports: 300,
    leaderElection: { leaseName: 'imp-lease' },
  },
};

describe('export agent', () => {
  it('parses the chart defaults', async () => {
    const parse = await agentParseConfig('export-agent');
    const cfg = await parseWith(parse, processEnv(deployment({}, 'export-agent')));
    expect(cfg).toMatchObject({
      leaderElect: true,
      leaseNamespace: 'mcs-system',
      leaseName: 'mcs-cloudmap-mcs-export-agent',
      healthPort: 8081,
      metricsPort: 8081,
      identity: POD,
      logLevel: 'info',
      logFormat: 'json',
    });
  });

  it('parses every value the chart passes it, with the meaning the values promise', async () => {
    const parse = await agentParseConfig('export-agent');
    const cfg = await parseWith(parse, processEnv(deployment(everything, 'export-agent')));
    expect(cfg).toMatchObject({
      clusterId: 'east-1',
      clustersetId: 'prod',
      region: 'eu-west-1',
      cloudMapEndpoint: 'http://127.0.0.1:4566',
      assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
      workers: 3,
      resyncSeconds: 90,
      backgroundBudget: 4,
      peerCheckSeconds: 3,
      peerCheckBudget: 40,
      registerRatePerSecond: 7,
      leaderElect: true,
      leaseNamespace: 'mcs-system',
      leaseName: 'exp-lease',
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
      retryPeriodSeconds: 4,
      healthPort: 9091,
      logLevel: 'debug',
      logFormat: 'json',
      identity: POD,
      dns: { ttl: 30, namespaceVpc: 'vpc-0abc123' },
    });
  });

  it('passes no DNS options by default, and refuses a namespace VPC without records', async () => {
    const parse = await agentParseConfig('export-agent');
    const cfg = await parseWith(parse, processEnv(deployment({}, 'export-agent')));
    expect(cfg['dns']).toBeUndefined();
    expect(render({ values: { exportAgent: { dns: { namespaceVpc: 'vpc-1' } } } }).stderr).toMatch(
      /namespaceVpc needs exportAgent\.dns\.records=true/,
    );
  });

  it('parses the external ID and a single replica without election', async () => {
    const parse = await agentParseConfig('export-agent');
    const values = {
      aws: {
        assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
        externalId: 'x-1',
      },
      importAgent: { enabled: false },
      exportAgent: { replicas: 1, leaderElection: { enabled: false } },
    };
    const cfg = await parseWith(parse, processEnv(deployment(values, 'export-agent')));
    expect(cfg).toMatchObject({ assumeRoleExternalId: 'x-1', leaderElect: false });
  });
});

describe('import agent', () => {
  it('parses the chart defaults', async () => {
    const parse = await agentParseConfig('import-agent');
    const cfg = await parseWith(parse, processEnv(deployment({}, 'import-agent')));
    expect(cfg).toMatchObject({
      leaderElect: true,
      leaseNamespace: 'mcs-system',
      leaseName: 'mcs-cloudmap-mcs-import-agent',
      healthPort: 8081,
      metricsPort: 8080,
      identity: POD,
      logLevel: 'info',
      logFormat: 'json',
      pollSlowMs: 60_000,
      pollFeedMs: 1_200,
      pollFastMs: 5_000,
      pollHeartbeatMs: 30_000,
      pollResyncMs: 3_600_000,
      pollBackgroundBudget: 4,
      heartbeatTtlMs: 120_000,
      allowedCidrs: [],
      namespaces: {
        allowed: [],
        denied: ['kube-system', 'kube-public', 'kube-node-lease', 'default'],
      },
      caps: { perNamespace: 2000, total: 5000 },
    });
  });

  it('parses every value the chart passes it, with the meaning the values promise', async () => {
    const parse = await agentParseConfig('import-agent');
    const cfg = await parseWith(parse, processEnv(deployment(everything, 'import-agent')));
    expect(cfg).toMatchObject({
      clusterId: 'east-1',
      clustersetId: 'prod',
      region: 'eu-west-1',
      cloudMapEndpoint: 'http://127.0.0.1:4566',
      assumeRoleArn: 'arn:aws:iam::444455556666:role/cloudmap-mcs-registry',
      workers: 2,
      pollFeedMs: 2_000,
      pollFastMs: 3_000,
      pollBackgroundBudget: 10,
      requestBudgetPerSecond: 25,
      heartbeatTtlMs: 180_000,
      allowedCidrs: ['10.0.0.0/8', 'fd00::/8'],
      namespaces: { allowed: ['shop', 'default'], denied: ['kube-system'] },
      caps: { perNamespace: 20, total: 300 },
      leaderElect: true,
      leaseNamespace: 'mcs-system',
      leaseName: 'imp-lease',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
      identity: POD,
      healthPort: 9091,
      metricsPort: 9090,
      logLevel: 'debug',
      logFormat: 'json',
    });
  });

  it('serves metrics on the health port when the chart has metrics off', async () => {
    const parse = await agentParseConfig('import-agent');
    const cfg = await parseWith(
      parse,
      processEnv(deployment({ metrics: { enabled: false } }, 'import-agent')),
    );
    expect(cfg).toMatchObject({ healthPort: 8081, metricsPort: 8081 });
  });
});

describe('the check itself', () => {
  it('notices a variable the export agent does not know (refused, or reported as ignored)', async () => {
    const parse = await agentParseConfig('export-agent');
    const env = { ...processEnv(deployment({}, 'export-agent')), MCS_POLL_FAST_SECONDS: '5' };
    let outcome: string;
    try {
      const cfg = await parseWith(parse, env);
      outcome = `ignored: ${JSON.stringify(cfg['ignoredEnvironment'] ?? [])}`;
    } catch (error) {
      outcome = `refused: ${error instanceof Error ? error.message : String(error)}`;
    }
    expect(outcome).toMatch(/MCS_POLL_FAST_SECONDS|poll-fast-seconds|pollFastSeconds/i);
  });

  it('passes the export agent no variable it ignores', async () => {
    const parse = await agentParseConfig('export-agent');
    for (const values of [{}, everything]) {
      const cfg = await parseWith(parse, processEnv(deployment(values, 'export-agent')));
      expect(cfg['ignoredEnvironment'] ?? []).toEqual([]);
    }
  });

  it('passes the import agent no variable it ignores', async () => {
    const parse = await agentParseConfig('import-agent');
    for (const values of [{}, everything]) {
      const env = processEnv(deployment(values, 'import-agent'));
      expect(Object.keys(env).filter((n) => n.startsWith('MCS_')).length).toBeGreaterThan(15);
      const cfg = await parseWith(parse, env);
      expect(cfg['ignoredEnvironment'] ?? []).toEqual([]);
    }
  });
});
