import yargs from 'yargs';
import type { LogLevel } from '@cloudmap-mcs/core';
import { isLabelKey, parseLabelKeyList } from './pod-label-attributes.js';

/** Everything the export agent is configured with; built once in main.ts, passed down. */
export interface ExportAgentConfig {
  kubeconfig?: string;
  clusterId?: string;
  clustersetId?: string;
  region?: string;
  cloudMapEndpoint?: string;
  assumeRoleArn?: string;
  assumeRoleExternalId?: string;
  workers: number;
  resyncSeconds: number;
  /** Revision check period of each exported service (others' changes); 0 turns it off. */
  peerCheckSeconds: number;
  /** DiscoverInstancesRevision calls per second the peer checks may use. */
  peerCheckBudget: number;
  heartbeatSeconds: number;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** One port for /healthz, /readyz and /metrics. */
  healthPort: number;
  logLevel: LogLevel;
  podName: string;
  registerRatePerSecond: number;
  /**
   * DNS namespaces (`--dns-records`, ADR 0010): services created in DNS_PRIVATE namespaces get
   * DnsConfig; absent when off (the default).
   */
  dns?: { ttl: number; namespaceVpc?: string };
  /** Pod label keys every ServiceExport without the annotation exports as attributes. */
  podLabelAttributes: string[];
  /** MCS_* variables that are not flags of this agent (logged with the config). */
  ignoredEnvironment: string[];
}

const OPTIONS = {
  kubeconfig: { type: 'string', describe: 'kubeconfig path; in-cluster config when absent' },
  'cluster-id': {
    type: 'string',
    describe: 'cluster id; overrides ClusterProperty cluster.clusterset.k8s.io',
  },
  'clusterset-id': {
    type: 'string',
    describe: 'clusterset id; overrides ClusterProperty clusterset.k8s.io',
  },
  region: { type: 'string', describe: 'AWS region; the standard AWS chain when absent' },
  'cloudmap-endpoint': { type: 'string', describe: 'Cloud Map endpoint URL (emulator, tests)' },
  'assume-role-arn': {
    type: 'string',
    describe: 'IAM role to assume for Cloud Map (cross-account)',
  },
  'assume-role-external-id': { type: 'string', describe: 'external id for the assumed role' },
  workers: { type: 'number', default: 4, describe: 'concurrent reconciles' },
  'resync-seconds': {
    type: 'number',
    default: 60,
    describe: 'period to re-check each export (conflicts)',
  },
  'peer-check-seconds': {
    type: 'number',
    default: 2,
    describe:
      'period of the DiscoverInstancesRevision check of each exported service, so conflicts ' +
      'follow other clusters (0: off, resync only)',
  },
  'peer-check-budget': {
    type: 'number',
    default: 100,
    describe: 'peer checks per second at most; more exports stretch the period',
  },
  'heartbeat-seconds': { type: 'number', default: 30, describe: 'heartbeat renewal period' },
  'leader-elect': {
    type: 'boolean',
    default: true,
    describe: 'run leader election (HA replicas)',
  },
  'lease-namespace': {
    type: 'string',
    default: 'cloudmap-mcs-system',
    describe: 'namespace of the Lease',
  },
  'lease-name': {
    type: 'string',
    default: 'cloudmap-mcs-export-agent',
    describe: 'name of the Lease',
  },
  'lease-duration-seconds': { type: 'number', default: 15 },
  'renew-deadline-seconds': { type: 'number', default: 10 },
  'retry-period-seconds': { type: 'number', default: 2 },
  'health-port': {
    type: 'number',
    default: 8080,
    describe: 'port of /healthz, /readyz and /metrics (0: any free port)',
  },
  'log-level': {
    choices: ['error', 'warn', 'info', 'debug'] as const,
    default: 'info' as const,
  },
  'pod-name': { type: 'string', describe: 'this replica’s name (leader identity, events)' },
  'register-rate': {
    type: 'number',
    default: 20,
    describe: 'RegisterInstance/DeregisterInstance calls per second',
  },
  'dns-records': {
    type: 'boolean',
    default: false,
    describe:
      'create services in DNS_PRIVATE namespaces with A/AAAA and SRV records (MULTIVALUE, custom health), so VPC clients resolve <service>.<namespace>',
  },
  'pod-label-attributes': {
    type: 'string',
    default: '',
    describe:
      'comma-separated pod label keys written as POD_LABEL_<key> attributes on endpoint instances of every ServiceExport without the cloudmap-mcs.io/pod-label-attributes annotation',
  },
  'dns-ttl': { type: 'number', default: 10, describe: 'TTL of those records, seconds' },
  'dns-namespace-vpc': {
    type: 'string',
    describe:
      'with --dns-records: create absent Cloud Map namespaces as DNS_PRIVATE in this VPC (vpc-…) instead of HTTP',
  },
} as const;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses flags; every flag also reads `MCS_<FLAG_NAME>` (e.g. `MCS_CLUSTER_ID`). `env` is passed
 * in (main.ts hands `process.env`) so nothing else reads the environment.
 */
export async function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<ExportAgentConfig> {
  const { known, ignored } = envToArgs(env);
  const args = await yargs([...argv])
    .scriptName('cloudmap-mcs-export-agent')
    .usage('Exports ServiceExports of this cluster to AWS Cloud Map.')
    .parserConfiguration({ 'strip-aliased': true, 'strip-dashed': true })
    .options(OPTIONS)
    .env(false)
    .config(known)
    .strict()
    .help()
    .exitProcess(false)
    .fail((message: string | undefined, error: Error | undefined) => {
      throw new ConfigError(message ?? error?.message ?? 'invalid arguments');
    })
    .parseAsync();
  const positive = (name: string, value: number) => {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigError(`--${name} must be a positive number, got ${value}`);
    return value;
  };
  const nonNegative = (name: string, value: number) => {
    if (!Number.isFinite(value) || value < 0)
      throw new ConfigError(`--${name} must be 0 or a positive number, got ${value}`);
    return value;
  };
  const port = (name: string, value: number) => {
    if (!Number.isInteger(value) || value < 0 || value > 65535)
      throw new ConfigError(`--${name} must be a port, got ${value}`);
    return value;
  };
  const config: ExportAgentConfig = {
    workers: Math.floor(positive('workers', args.workers)),
    resyncSeconds: positive('resync-seconds', args.resyncSeconds),
    peerCheckSeconds: nonNegative('peer-check-seconds', args.peerCheckSeconds),
    peerCheckBudget: positive('peer-check-budget', args.peerCheckBudget),
    heartbeatSeconds: positive('heartbeat-seconds', args.heartbeatSeconds),
    leaderElect: args.leaderElect,
    leaseNamespace: args.leaseNamespace,
    leaseName: args.leaseName,
    leaseDurationSeconds: positive('lease-duration-seconds', args.leaseDurationSeconds),
    renewDeadlineSeconds: positive('renew-deadline-seconds', args.renewDeadlineSeconds),
    retryPeriodSeconds: positive('retry-period-seconds', args.retryPeriodSeconds),
    healthPort: port('health-port', args.healthPort),
    logLevel: args.logLevel,
    podName: args.podName ?? `export-agent-${Math.random().toString(36).slice(2, 8)}`,
    registerRatePerSecond: positive('register-rate', args.registerRate),
    podLabelAttributes: parseLabelKeyList(args.podLabelAttributes),
    ignoredEnvironment: ignored,
  };
  if (!(
    config.leaseDurationSeconds > config.renewDeadlineSeconds &&
    config.renewDeadlineSeconds > config.retryPeriodSeconds
  )) {
    throw new ConfigError('leader election needs lease-duration > renew-deadline > retry-period');
  }
  const badLabels = config.podLabelAttributes.filter((k) => !isLabelKey(k));
  if (badLabels.length > 0)
    throw new ConfigError(`--pod-label-attributes: not label keys: ${badLabels.join(', ')}`);
  if (args.dnsNamespaceVpc !== undefined && args.dnsNamespaceVpc !== '' && !args.dnsRecords)
    throw new ConfigError('--dns-namespace-vpc needs --dns-records');
  if (args.dnsRecords) {
    const ttl = args.dnsTtl;
    if (!Number.isInteger(ttl) || ttl < 0 || ttl > 2147483647)
      throw new ConfigError(`--dns-ttl must be a whole number of seconds, got ${ttl}`);
    const vpc = args.dnsNamespaceVpc;
    config.dns = { ttl, ...(vpc === undefined || vpc === '' ? {} : { namespaceVpc: vpc }) };
  }
  const optional = {
    kubeconfig: args.kubeconfig,
    clusterId: args.clusterId,
    clustersetId: args.clustersetId,
    region: args.region,
    cloudMapEndpoint: args.cloudmapEndpoint,
    assumeRoleArn: args.assumeRoleArn,
    assumeRoleExternalId: args.assumeRoleExternalId,
  };
  for (const [k, v] of Object.entries(optional))
    if (v !== undefined && v !== '') (config as unknown as Record<string, unknown>)[k] = v;
  return config;
}

/** `MCS_CLUSTER_ID=x` → `{ 'cluster-id': 'x' }`; flags given on the command line win. */
function envToArgs(env: Readonly<Record<string, string | undefined>>): {
  known: Record<string, string>;
  ignored: string[];
} {
  const known: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('MCS_') || v === undefined) continue;
    const flag = k.slice(4).toLowerCase().replace(/_/g, '-');
    // Other tools (the e2e harness, the import agent) share the prefix: not ours, not an error.
    if (flag in OPTIONS) known[flag] = v;
    else ignored.push(k);
  }
  return { known, ignored: ignored.sort() };
}
