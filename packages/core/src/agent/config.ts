import yargs, { type ArgumentsCamelCase, type InferredOptionTypes, type Options } from 'yargs';
import { logLevels, type LogLevel } from '../logging/logger.js';

/**
 * The configuration both agents share (docs/architecture.md#configuration): the same flag names and meanings, each
 * flag also read from `MCS_<FLAG_NAME>` (`--lease-name` ⇔ `MCS_LEASE_NAME`), parsed and
 * validated once in the agent's entry point. Flags are documented once, in docs/install.md.
 */
export interface CommonConfig {
  kubeconfig?: string;
  /** Override ClusterProperty cluster.clusterset.k8s.io / clusterset.k8s.io. */
  clusterId?: string;
  clustersetId?: string;
  region?: string;
  cloudMapEndpoint?: string;
  assumeRoleArn?: string;
  /** External ID the role's trust policy requires (confused-deputy protection). */
  assumeRoleExternalId?: string;
  workers: number;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** This replica: leader-election identity and Events' reportingInstance (the Pod name). */
  identity: string;
  /** /healthz, /readyz (and /metrics); 0 picks a free port. */
  healthPort: number;
  /** /metrics (with the health endpoints); the health port's server when equal. */
  metricsPort: number;
  bindAddress: string;
  logLevel: LogLevel;
  logFormat: 'json' | 'text';
  /** MCS_* variables that name no flag of this agent (logged with the config). */
  ignoredEnvironment: string[];
}

/** What differs per agent in the common flags: their defaults. */
export interface CommonDefaults {
  leaseName: string;
  healthPort: number;
  /** Default: the health port (one server). */
  metricsPort?: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const commonOptions = (defaults: CommonDefaults) =>
  ({
    kubeconfig: {
      type: 'string',
      describe: 'kubeconfig path (default: $KUBECONFIG, ~/.kube/config, in-cluster)',
    },
    'cluster-id': {
      type: 'string',
      describe: 'cluster id; overrides ClusterProperty cluster.clusterset.k8s.io',
    },
    'clusterset-id': {
      type: 'string',
      describe: 'clusterset id; overrides ClusterProperty clusterset.k8s.io',
    },
    region: { type: 'string', describe: 'AWS region (default: $AWS_REGION, the SDK chain)' },
    'cloudmap-endpoint': {
      type: 'string',
      describe: 'Cloud Map endpoint URL (emulator); default $AWS_ENDPOINT_URL_SERVICEDISCOVERY',
    },
    'assume-role-arn': {
      type: 'string',
      describe: 'IAM role to assume for Cloud Map (cross-account)',
    },
    'assume-role-external-id': { type: 'string', describe: 'external ID for --assume-role-arn' },
    workers: { type: 'number', default: 4, describe: 'concurrent reconciles' },
    'leader-elect': {
      type: 'boolean',
      default: true,
      describe: 'run leader election on a Lease (HA replicas)',
    },
    'lease-namespace': {
      type: 'string',
      default: 'cloudmap-mcs-system',
      describe: 'namespace of the Lease',
    },
    'lease-name': { type: 'string', default: defaults.leaseName, describe: 'name of the Lease' },
    'lease-duration-seconds': { type: 'number', default: 15, describe: 'how long a Lease holds' },
    'renew-deadline-seconds': {
      type: 'number',
      default: 10,
      describe: 'how long the leader tries to renew before giving up',
    },
    'retry-period-seconds': { type: 'number', default: 2, describe: 'between Lease attempts' },
    identity: {
      type: 'string',
      alias: 'pod-name',
      describe: 'this replica (Lease holder, Events); default: hostname + pid',
    },
    'health-port': {
      type: 'number',
      default: defaults.healthPort,
      describe: 'port of /healthz and /readyz (and /metrics); 0: any free port',
    },
    'metrics-port': {
      type: 'number',
      describe: 'port of /metrics (default: the health port)',
      ...(defaults.metricsPort === undefined ? {} : { default: defaults.metricsPort }),
    },
    'bind-address': {
      type: 'string',
      default: '0.0.0.0',
      describe: 'address the health and metrics servers listen on',
    },
    'log-level': { choices: logLevels, default: 'info' as LogLevel },
    'log-format': { choices: ['json', 'text'] as const, default: 'json' as 'json' | 'text' },
  }) as const satisfies Record<string, Options>;

type CommonArgs = ArgumentsCamelCase<InferredOptionTypes<ReturnType<typeof commonOptions>>>;

/**
 * `MCS_CLUSTER_ID=x` → `{ 'cluster-id': 'x' }` for the flags (and aliases) in `flags`; flags on
 * the command line win. Other MCS_* variables (the e2e harness, the other agent) are not
 * ours: listed, not an error.
 */
export function envToArgs(
  env: Readonly<Record<string, string | undefined>>,
  flags: ReadonlySet<string>,
): { known: Record<string, string>; ignored: string[] } {
  const known: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('MCS_') || v === undefined) continue;
    const flag = k.slice(4).toLowerCase().replace(/_/g, '-');
    if (flags.has(flag)) known[flag] = v;
    else ignored.push(k);
  }
  return { known, ignored: ignored.sort() };
}

export const positive = (name: string, value: number): number => {
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`--${name} must be a positive number, got ${String(value)}`);
  return value;
};

export const nonNegative = (name: string, value: number): number => {
  if (!Number.isFinite(value) || value < 0)
    throw new ConfigError(`--${name} must be 0 or a positive number, got ${String(value)}`);
  return value;
};

export const port = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 0 || value > 65535)
    throw new ConfigError(`--${name} must be a port, got ${String(value)}`);
  return value;
};

/** A comma-separated list, trimmed, empty items dropped. */
export const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

export interface ConfigSpec<O extends Record<string, Options>, Own> {
  /** `export-agent` / `import-agent`; the program is `cloudmap-mcs-<name>`. */
  name: string;
  usage: string;
  defaults: CommonDefaults;
  /** This agent's own flags. */
  options: O;
  /** Validates this agent's flags into its own config; throws ConfigError. */
  build(args: ArgumentsCamelCase<InferredOptionTypes<O>>, common: CommonConfig): Own;
}

/** Parses argv and MCS_* env into the common config plus the agent's own. */
export async function parseAgentConfig<O extends Record<string, Options>, Own extends object>(
  spec: ConfigSpec<O, Own>,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  hostname: string,
): Promise<CommonConfig & Own> {
  const options = { ...commonOptions(spec.defaults), ...spec.options };
  const flags = new Set<string>(Object.keys(options));
  for (const o of Object.values(options) as Options[])
    for (const a of [o.alias ?? []].flat()) flags.add(a);
  const { known, ignored } = envToArgs(env, flags);
  const args = (await yargs([...argv])
    .scriptName(`cloudmap-mcs-${spec.name}`)
    .usage(spec.usage)
    .parserConfiguration({ 'strip-aliased': true, 'strip-dashed': true })
    .options(options)
    .env(false)
    .config(known)
    .strict()
    .help()
    .exitProcess(false)
    .fail((message: string | undefined, error: Error | undefined) => {
      throw new ConfigError(message ?? error?.message ?? 'invalid arguments');
    })
    .parseAsync()) as unknown as CommonArgs & ArgumentsCamelCase<InferredOptionTypes<O>>;
  const common = commonConfig(args, env, hostname, ignored);
  return { ...common, ...spec.build(args, common) };
}

function commonConfig(
  args: CommonArgs,
  env: Readonly<Record<string, string | undefined>>,
  hostname: string,
  ignored: string[],
): CommonConfig {
  const healthPort = port('health-port', args.healthPort);
  // yargs skips `choices` once 'strip-dashed' drops the dashed keys; checked here instead.
  if (!logLevels.includes(args.logLevel))
    throw new ConfigError(`--log-level must be one of ${logLevels.join(', ')}`);
  if (args.logFormat !== 'json' && args.logFormat !== 'text')
    throw new ConfigError('--log-format must be json or text');
  const config: CommonConfig = {
    workers: Math.floor(positive('workers', args.workers)),
    leaderElect: args.leaderElect,
    leaseNamespace: args.leaseNamespace,
    leaseName: args.leaseName,
    leaseDurationSeconds: positive('lease-duration-seconds', args.leaseDurationSeconds),
    renewDeadlineSeconds: positive('renew-deadline-seconds', args.renewDeadlineSeconds),
    retryPeriodSeconds: positive('retry-period-seconds', args.retryPeriodSeconds),
    identity: nonEmpty(args.identity) ?? `${hostname}-${String(process.pid)}`,
    healthPort,
    metricsPort:
      args.metricsPort === undefined ? healthPort : port('metrics-port', args.metricsPort),
    bindAddress: args.bindAddress,
    logLevel: args.logLevel,
    logFormat: args.logFormat,
    ignoredEnvironment: ignored,
  };
  if (!(
    config.leaseDurationSeconds > config.renewDeadlineSeconds &&
    config.renewDeadlineSeconds > config.retryPeriodSeconds
  ))
    throw new ConfigError('leader election needs lease-duration > renew-deadline > retry-period');
  const optional = {
    // Absent: client-node's default chain ($KUBECONFIG, ~/.kube/config, in-cluster).
    kubeconfig: nonEmpty(args.kubeconfig),
    clusterId: nonEmpty(args.clusterId),
    clustersetId: nonEmpty(args.clustersetId),
    region: nonEmpty(args.region) ?? nonEmpty(env['AWS_REGION']),
    cloudMapEndpoint:
      nonEmpty(args.cloudmapEndpoint) ?? nonEmpty(env['AWS_ENDPOINT_URL_SERVICEDISCOVERY']),
    assumeRoleArn: nonEmpty(args.assumeRoleArn),
    assumeRoleExternalId: nonEmpty(args.assumeRoleExternalId),
  };
  if (optional.assumeRoleExternalId !== undefined && optional.assumeRoleArn === undefined)
    throw new ConfigError('--assume-role-external-id needs --assume-role-arn');
  for (const [k, v] of Object.entries(optional))
    if (v !== undefined) (config as unknown as Record<string, unknown>)[k] = v;
  return config;
}

const nonEmpty = (v: string | undefined): string | undefined =>
  v === undefined || v === '' ? undefined : v;
