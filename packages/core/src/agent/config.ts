import yargs, { type ArgumentsCamelCase, type InferredOptionTypes, type Options } from 'yargs';
import { logLevels, type LogLevel } from '../logging/logger.js';
import { ConfigError, endpointUrl, port, positive } from './validate.js';
import { TEST_TIMINGS_VARIABLE, parseTestTimings, refuseRetired } from './environment.js';

export { ConfigError, list, nonNegative, port, positive } from './validate.js';

/**
 * The configuration both agents share (docs/architecture.md#configuration): the same flag names and meanings, each
 * flag also read from `MCS_<FLAG_NAME>` (`--lease-name` ⇔ `MCS_LEASE_NAME`), parsed and
 * validated once in the agent's entry point. Flags are documented once, in docs/install.md.
 * What Kubernetes and AWS users already set is read from the standard variables instead of
 * flags: KUBECONFIG (client-node), AWS_REGION, AWS_ENDPOINT_URL_SERVICEDISCOVERY, POD_NAMESPACE
 * and POD_NAME (downward API).
 */
export interface CommonConfig {
  /** Override ClusterProperty cluster.clusterset.k8s.io / clusterset.k8s.io. */
  clusterId?: string;
  clustersetId?: string;
  /** $AWS_REGION; absent: the SDK's chain (profile, IMDS). */
  region?: string;
  /**
   * $AWS_ENDPOINT_URL_SERVICEDISCOVERY: a VPC or FIPS endpoint (https, DiscoverInstances* on
   * its `data-` host), or an emulator in development (http, every operation on it).
   */
  cloudMapEndpoint?: string;
  /** $AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA: DiscoverInstances*' host, for a VPC endpoint without private DNS. */
  cloudMapDataEndpoint?: string;
  assumeRoleArn?: string;
  /** External ID the role's trust policy requires (confused-deputy protection). */
  assumeRoleExternalId?: string;
  workers: number;
  leaderElect: boolean;
  /** $POD_NAMESPACE (downward API), else cloudmap-mcs-system. */
  leaseNamespace: string;
  leaseName: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** This replica: leader-election identity and Events' reportingInstance ($POD_NAME). */
  identity: string;
  /** /healthz, /readyz (and /metrics); 0 picks a free port. */
  healthPort: number;
  /** /metrics (with the health endpoints); the health port's server when equal. */
  metricsPort: number;
  /** Unset: every address of both families (Node's default; IPv6-only pods need it). */
  bindAddress: string | undefined;
  logLevel: LogLevel;
  /** JSON, or text when stdout is a terminal (a developer running the agent by hand). */
  logFormat: 'json' | 'text';
  /** MCS_* variables that name no flag of this agent (logged with the config). */
  ignoredEnvironment: string[];
  /** The MCS_TEST_TIMINGS overrides, when set (test only; warned about at start). */
  testTimings?: Record<string, number>;
}

/** What differs per agent in the common flags: their defaults. */
export interface CommonDefaults {
  leaseName: string;
  healthPort: number;
  /** Default: the health port (one server). */
  metricsPort?: number;
}

/**
 * The flags both agents share. Each describe says when to change it: a flag nobody has a reason
 * to change is a constant (`flags.test.ts` of each agent holds the count at most 25).
 */
export const commonOptions = (defaults: CommonDefaults) =>
  ({
    'cluster-id': {
      type: 'string',
      describe:
        'this cluster’s id when no ClusterProperty cluster.clusterset.k8s.io names it (or to override it)',
    },
    'clusterset-id': {
      type: 'string',
      describe:
        'the clusterset id when no ClusterProperty clusterset.k8s.io names it (or to override it)',
    },
    'assume-role-arn': {
      type: 'string',
      describe:
        'IAM role to assume for Cloud Map when the namespaces live in another account than the Pod’s credentials',
    },
    'assume-role-external-id': {
      type: 'string',
      describe: 'external ID the --assume-role-arn trust policy requires (confused deputy)',
    },
    workers: {
      type: 'number',
      default: 4,
      describe: 'concurrent reconciles; raise with thousands of services and spare CPU',
    },
    'leader-elect': {
      type: 'boolean',
      default: true,
      describe:
        'run leader election on a Lease; turn off only for a single replica without RBAC on Leases',
    },
    'lease-name': {
      type: 'string',
      default: defaults.leaseName,
      describe: 'name of the Lease (in $POD_NAMESPACE); change when two installs share a namespace',
    },
    'lease-duration-seconds': {
      type: 'number',
      default: 15,
      describe: 'how long a Lease holds: lower fails over faster, higher survives slow API servers',
    },
    'renew-deadline-seconds': {
      type: 'number',
      default: 10,
      describe: 'how long the leader tries to renew before giving up; below the lease duration',
    },
    'retry-period-seconds': {
      type: 'number',
      default: 2,
      describe: 'between Lease attempts; below the renew deadline',
    },
    'health-port': {
      type: 'number',
      default: defaults.healthPort,
      describe:
        'port of /healthz and /readyz (and /metrics); change on a port clash; 0: any free port',
    },
    'metrics-port': {
      type: 'number',
      describe:
        'port of /metrics when it must differ from the health port (default: the health port)',
      ...(defaults.metricsPort === undefined ? {} : { default: defaults.metricsPort }),
    },
    'bind-address': {
      type: 'string',
      describe:
        'address the health and metrics servers listen on, e.g. 127.0.0.1 to keep them local (default: every address, IPv6 and IPv4)',
    },
    'log-level': {
      choices: logLevels,
      default: 'info' as LogLevel,
      describe: 'debug to trace reconciles and Cloud Map calls; warn or error for quieter logs',
    },
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

export interface ConfigSpec<
  O extends Record<string, Options>,
  Own,
  T extends Record<string, number> = Record<string, number>,
> {
  /** `export-agent` / `import-agent`; the program is `cloudmap-mcs-<name>`. */
  name: string;
  usage: string;
  /**
   * The release version (`--version`, `cloudmap_mcs_build_info`): the agent's package.json
   * version, which tools/set-version.sh stamps from the root package.json.
   */
  version: string;
  defaults: CommonDefaults;
  /** This agent's own flags. */
  options: O;
  /**
   * Internal periods only tests change (through MCS_TEST_TIMINGS, docs/contributing.md); the
   * keys listed in `timingsZeroAllowed` may be 0.
   */
  timings?: T;
  timingsZeroAllowed?: readonly (keyof T & string)[];
  /** Validates this agent's flags into its own config; throws ConfigError. */
  build(args: ArgumentsCamelCase<InferredOptionTypes<O>>, common: CommonConfig, timings: T): Own;
}

/** The yargs options of an agent: the common flags and its own (what `--help` lists). */
export const agentOptions = <O extends Record<string, Options>>(
  spec: Pick<ConfigSpec<O, unknown>, 'defaults' | 'options'>,
): Record<string, Options> => ({ ...commonOptions(spec.defaults), ...spec.options });

/**
 * Parses argv and MCS_* env into the common config plus the agent's own. `stdoutIsTTY` picks
 * the log format: text for a terminal, JSON otherwise.
 */
export async function parseAgentConfig<
  O extends Record<string, Options>,
  Own extends object,
  T extends Record<string, number> = Record<string, number>,
>(
  spec: ConfigSpec<O, Own, T>,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  hostname: string,
  stdoutIsTTY = false,
): Promise<CommonConfig & Own> {
  refuseRetired(env);
  const options = agentOptions(spec);
  const flags = new Set<string>(Object.keys(options));
  for (const o of Object.values(options)) for (const a of [o.alias ?? []].flat()) flags.add(a);
  const { known, ignored } = envToArgs(env, flags);
  const args = (await yargs([...argv])
    .scriptName(`cloudmap-mcs-${spec.name}`)
    .usage(spec.usage)
    .parserConfiguration({ 'strip-aliased': true, 'strip-dashed': true })
    .options(options)
    .env(false)
    .config(known)
    .strict()
    .version(spec.version)
    .help()
    .exitProcess(false)
    .fail((message: string | undefined, error: Error | undefined) => {
      throw new ConfigError(message ?? error?.message ?? 'invalid arguments');
    })
    .parseAsync()) as unknown as CommonArgs & ArgumentsCamelCase<InferredOptionTypes<O>>;
  const defaults = spec.timings ?? ({} as T);
  const overrides = parseTestTimings(defaults, env[TEST_TIMINGS_VARIABLE], spec.timingsZeroAllowed);
  const common = commonConfig(
    args,
    env,
    hostname,
    ignored.filter((k) => k !== TEST_TIMINGS_VARIABLE),
    stdoutIsTTY,
  );
  if (Object.keys(overrides).length > 0) common.testTimings = overrides as Record<string, number>;
  return { ...common, ...spec.build(args, common, { ...defaults, ...overrides }) };
}

function commonConfig(
  args: CommonArgs,
  env: Readonly<Record<string, string | undefined>>,
  hostname: string,
  ignored: string[],
  stdoutIsTTY: boolean,
): CommonConfig {
  const healthPort = port('health-port', args.healthPort);
  // yargs skips `choices` once 'strip-dashed' drops the dashed keys; checked here instead.
  if (!logLevels.includes(args.logLevel))
    throw new ConfigError(`--log-level must be one of ${logLevels.join(', ')}`);
  const config: CommonConfig = {
    workers: Math.floor(positive('workers', args.workers)),
    leaderElect: args.leaderElect,
    // The downward API's namespace (the chart sets it); the install's default otherwise.
    leaseNamespace: nonEmpty(env['POD_NAMESPACE']) ?? 'cloudmap-mcs-system',
    leaseName: args.leaseName,
    leaseDurationSeconds: positive('lease-duration-seconds', args.leaseDurationSeconds),
    renewDeadlineSeconds: positive('renew-deadline-seconds', args.renewDeadlineSeconds),
    retryPeriodSeconds: positive('retry-period-seconds', args.retryPeriodSeconds),
    identity: nonEmpty(env['POD_NAME']) ?? `${hostname}-${String(process.pid)}`,
    healthPort,
    metricsPort:
      args.metricsPort === undefined ? healthPort : port('metrics-port', args.metricsPort),
    bindAddress: nonEmpty(args.bindAddress),
    logLevel: args.logLevel,
    logFormat: stdoutIsTTY ? 'text' : 'json',
    ignoredEnvironment: ignored,
  };
  if (!(
    config.leaseDurationSeconds > config.renewDeadlineSeconds &&
    config.renewDeadlineSeconds > config.retryPeriodSeconds
  ))
    throw new ConfigError('leader election needs lease-duration > renew-deadline > retry-period');
  const optional = {
    clusterId: nonEmpty(args.clusterId),
    clustersetId: nonEmpty(args.clustersetId),
    // The SDK's standard variables (an emulator, in development, is an endpoint override).
    region: nonEmpty(env['AWS_REGION']),
    cloudMapEndpoint: endpointUrl(env, 'AWS_ENDPOINT_URL_SERVICEDISCOVERY'),
    cloudMapDataEndpoint: endpointUrl(env, 'AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA'),
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
