import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Options } from 'yargs';
import { logLevels, type LogLevel } from '../../logging/logger.js';
import { cloudMapOperations, type CloudMapOperationName } from '../../ports/operations.js';
import type { RateLimit } from '../../cloudmap/rate-limits.js';
import { ConfigError } from './cli.js';

/** Flags both agents take; each agent adds its own and its Lease name default. */
export const commonOptions = {
  kubeconfig: {
    type: 'string',
    describe: 'kubeconfig path (default: $KUBECONFIG, ~/.kube/config, in-cluster)',
  },
  context: { type: 'string', describe: 'kubeconfig context (default: current)' },
  'log-level': { type: 'string', choices: logLevels, default: 'info', describe: 'log level' },
  'log-format': {
    type: 'string',
    choices: ['json', 'text'],
    default: 'json',
    describe: 'log format',
  },
  'metrics-bind-address': {
    type: 'string',
    default: '0.0.0.0:8080',
    describe: 'address of /metrics, /healthz, /readyz',
  },
  'cluster-id': { type: 'string', describe: 'override ClusterProperty cluster.clusterset.k8s.io' },
  'clusterset-id': { type: 'string', describe: 'override ClusterProperty clusterset.k8s.io' },
  'leader-elect': {
    type: 'boolean',
    default: true,
    describe: 'elect a leader on a Lease (for HA replicas)',
  },
  'leader-election-namespace': {
    type: 'string',
    describe: 'namespace of the Lease (default: the Pod namespace)',
  },
  'leader-election-id': { type: 'string', describe: 'name of the Lease (default: per agent)' },
  'leader-election-identity': {
    type: 'string',
    describe: 'this replica in the Lease (default: hostname + random)',
  },
  'lease-duration': { type: 'number', default: 15, describe: 'seconds a Lease is valid' },
  'renew-deadline': {
    type: 'number',
    default: 10,
    describe: 'seconds the leader tries to renew before giving up',
  },
  'retry-period': { type: 'number', default: 2, describe: 'seconds between Lease attempts' },
  region: { type: 'string', describe: 'AWS region (default: the AWS SDK chain)' },
  'cloudmap-endpoint': {
    type: 'string',
    describe: 'Cloud Map endpoint URL (emulator); default $AWS_ENDPOINT_URL_SERVICEDISCOVERY',
  },
  'assume-role-arn': {
    type: 'string',
    describe: 'IAM role to assume for Cloud Map (cross-account)',
  },
  'assume-role-external-id': { type: 'string', describe: 'external id for the AssumeRole' },
  'cloudmap-rate-limits': {
    type: 'string',
    describe:
      'per-operation limits over the defaults: op=perSecond:burst[,op=...], e.g. listInstances=5:10',
  },
  'shutdown-timeout': {
    type: 'number',
    default: 30,
    describe: 'seconds to finish in-flight work on SIGTERM',
  },
} as const satisfies Record<string, Options>;

export interface CommonConfig {
  kubeconfig?: string;
  context?: string;
  logLevel: LogLevel;
  logFormat: 'json' | 'text';
  metrics: { host: string; port: number };
  flags: { clusterId?: string; clustersetId?: string };
  leaderElection:
    | { enabled: false }
    | {
        enabled: true;
        namespace: string;
        name: string;
        identity: string;
        leaseDurationMs: number;
        renewDeadlineMs: number;
        retryPeriodMs: number;
      };
  aws: {
    region?: string;
    endpoint?: string;
    assumeRole?: { roleArn: string; externalId?: string };
    rateLimits: Partial<Record<CloudMapOperationName, RateLimit>>;
  };
  shutdownTimeoutMs: number;
}

export function parseRateLimits(
  spec: string | undefined,
): Partial<Record<CloudMapOperationName, RateLimit>> {
  const out: Partial<Record<CloudMapOperationName, RateLimit>> = {};
  if (spec === undefined || spec.trim() === '') return out;
  for (const part of spec.split(',')) {
    const m = /^\s*([A-Za-z]+)\s*=\s*([0-9.]+)\s*:\s*([0-9]+)\s*$/.exec(part);
    if (m === null)
      throw new ConfigError(`--cloudmap-rate-limits: "${part}" is not op=perSecond:burst`);
    const [, op = '', rate = '', burst = ''] = m;
    if (!(cloudMapOperations as readonly string[]).includes(op))
      throw new ConfigError(
        `--cloudmap-rate-limits: unknown operation "${op}" (one of ${cloudMapOperations.join(', ')})`,
      );
    const perSecond = Number(rate);
    const b = Number(burst);
    if (!(perSecond > 0) || !(b >= 1))
      throw new ConfigError(`--cloudmap-rate-limits: ${op} needs perSecond > 0 and burst >= 1`);
    out[op as CloudMapOperationName] = { perSecond, burst: b };
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function parseBindAddress(value: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(value);
  const port = Number(m?.[2]);
  if (m === null || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`--metrics-bind-address: "${value}" is not host:port`);
  return { host: (m[1] ?? '').replace(/^\[(.*)\]$/, '$1') || '0.0.0.0', port };
}

export interface CommonDefaults {
  /** The agent's Lease name, e.g. `cloudmap-mcs-export-agent`. */
  leaseName: string;
  /** The Pod namespace (main.ts: POD_NAMESPACE or the service-account namespace file). */
  podNamespace?: string | undefined;
  /** main.ts passes process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY']. */
  cloudMapEndpoint?: string | undefined;
}

/** Validates the common flags into a typed config; throws ConfigError naming the flag. */
export function commonConfigFrom(
  args: Record<string, unknown>,
  defaults: CommonDefaults,
): CommonConfig {
  const num = (name: string): number => {
    const v = args[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new ConfigError(`--${name} must be a positive number`);
    return v;
  };
  const leaderElect = args['leader-elect'] !== false;
  let leaderElection: CommonConfig['leaderElection'] = { enabled: false };
  if (leaderElect) {
    const namespace = str(args['leader-election-namespace']) ?? defaults.podNamespace;
    if (namespace === undefined)
      throw new ConfigError(
        '--leader-election-namespace is required with --leader-elect outside a Pod (or set POD_NAMESPACE)',
      );
    const [lease, renew, retry] = [
      num('lease-duration'),
      num('renew-deadline'),
      num('retry-period'),
    ];
    if (!(lease > renew && renew > retry))
      throw new ConfigError(
        '--lease-duration must exceed --renew-deadline, which must exceed --retry-period',
      );
    leaderElection = {
      enabled: true,
      namespace,
      name: str(args['leader-election-id']) ?? defaults.leaseName,
      identity:
        str(args['leader-election-identity']) ?? `${hostname()}_${randomBytes(4).toString('hex')}`,
      leaseDurationMs: lease * 1000,
      renewDeadlineMs: renew * 1000,
      retryPeriodMs: retry * 1000,
    };
  }
  const endpoint = str(args['cloudmap-endpoint']) ?? str(defaults.cloudMapEndpoint);
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new ConfigError(`--cloudmap-endpoint: "${endpoint}" is not a URL`);
  const roleArn = str(args['assume-role-arn']);
  if (roleArn !== undefined && !/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/.test(roleArn))
    throw new ConfigError(`--assume-role-arn: "${roleArn}" is not an IAM role ARN`);
  const externalId = str(args['assume-role-external-id']);
  if (externalId !== undefined && roleArn === undefined)
    throw new ConfigError('--assume-role-external-id needs --assume-role-arn');
  const optional = <K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } =>
    (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
  return {
    ...optional('kubeconfig', str(args['kubeconfig'])),
    ...optional('context', str(args['context'])),
    logLevel: (str(args['log-level']) ?? 'info') as LogLevel,
    logFormat: args['log-format'] === 'text' ? 'text' : 'json',
    metrics: parseBindAddress(str(args['metrics-bind-address']) ?? '0.0.0.0:8080'),
    flags: {
      ...optional('clusterId', str(args['cluster-id'])),
      ...optional('clustersetId', str(args['clusterset-id'])),
    },
    leaderElection,
    aws: {
      ...optional('region', str(args['region'])),
      ...optional('endpoint', endpoint),
      ...(roleArn === undefined
        ? {}
        : { assumeRole: { roleArn, ...optional('externalId', externalId) } }),
      rateLimits: parseRateLimits(str(args['cloudmap-rate-limits'])),
    },
    shutdownTimeoutMs: num('shutdown-timeout') * 1000,
  };
}
