import yargs from 'yargs';
import { parseCidr, type LogLevel } from '@cloudmap-mcs/core';
import {
  DEFAULT_DENIED_NAMESPACES,
  DEFAULT_IMPORT_CAPS,
  type ImportCaps,
  type NamespacePolicy,
} from './reconcile/scope.js';

/**
 * The import agent's one typed configuration (DESIGN.md §6): built in main.ts from flags and
 * MCS_* environment variables (flag `--poll-fast-seconds` ⇔ env `MCS_POLL_FAST_SECONDS`),
 * validated, logged once, passed down. Nothing else reads process.env.
 */
export interface ImportAgentConfig {
  kubeconfig?: string;
  /** Overrides ClusterProperty clusterset.k8s.io when set. */
  clustersetId?: string;
  /** Overrides ClusterProperty cluster.clusterset.k8s.io (only logged by an importer). */
  clusterId?: string;
  region?: string;
  cloudMapEndpoint?: string;
  assumeRoleArn?: string;
  /** External ID the role's trust policy requires (confused-deputy protection). */
  assumeRoleExternalId?: string;
  pollSlowMs: number;
  pollFastMs: number;
  pollResyncMs: number;
  pollJitter: number;
  pollMaxBackoffMs: number;
  requestBudgetPerSecond?: number;
  heartbeatTtlMs: number;
  allowedCidrs: string[];
  /** Where imports may be created (reconcile/scope.ts). */
  namespaces: NamespacePolicy;
  /** Caps on imports per namespace and per agent (reconcile/scope.ts). */
  caps: ImportCaps;
  /** Refused as endpoints besides the ServiceCIDRs and nodes read from the cluster. */
  localServiceCidrs: string[];
  /** How often the Service CIDRs and node addresses are read again. */
  localAddressesPeriodMs: number;
  /** Import CloudMapServiceImport selections (external/, ADR 0014). */
  externalServices: boolean;
  /** How often each selected non-Kubernetes service is read. */
  externalPollMs: number;
  workers: number;
  maxEndpointsPerSlice: number;
  metricsPort: number;
  healthPort: number;
  bindAddress: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  logLevel: LogLevel;
  logFormat: 'json' | 'text';
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Every flag, so MCS_* variables map onto flags and other MCS_* variables are ignored. */
const FLAGS = [
  'kubeconfig',
  'cluster-id',
  'clusterset-id',
  'region',
  'cloudmap-endpoint',
  'assume-role-arn',
  'assume-role-external-id',
  'poll-slow-seconds',
  'poll-fast-seconds',
  'poll-resync-seconds',
  'poll-jitter',
  'poll-max-backoff-seconds',
  'request-budget',
  'heartbeat-ttl-seconds',
  'allowed-cidrs',
  'allowed-namespaces',
  'denied-namespaces',
  'max-imports-per-namespace',
  'max-imports',
  'local-service-cidrs',
  'local-addresses-seconds',
  'external-services',
  'external-poll-seconds',
  'workers',
  'max-endpoints-per-slice',
  'metrics-port',
  'health-port',
  'bind-address',
  'leader-elect',
  'lease-namespace',
  'lease-name',
  'identity',
  'log-level',
  'log-format',
] as const;

/**
 * `MCS_POLL_FAST_SECONDS=2` becomes `--poll-fast-seconds=2`, placed before the real flags so
 * flags win. Only variables naming a flag count: MCS_E2E_* and the like belong to others.
 */
export function envArgs(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const flag of FLAGS) {
    const value = env[`MCS_${flag.toUpperCase().replaceAll('-', '_')}`];
    if (value !== undefined) out.push(`--${flag}=${value}`);
  }
  return out;
}

export function parseConfig(
  argv: string[],
  env: Record<string, string | undefined>,
  hostname: string,
): ImportAgentConfig {
  const args = yargs([...envArgs(env), ...argv])
    .parserConfiguration({ 'duplicate-arguments-array': false })
    .strict()
    .option('kubeconfig', {
      type: 'string',
      describe: 'kubeconfig path (default: in-cluster or KUBECONFIG)',
    })
    .option('cluster-id', {
      type: 'string',
      describe: 'cluster id; default: ClusterProperty cluster.clusterset.k8s.io',
    })
    .option('clusterset-id', {
      type: 'string',
      describe: 'clusterset id; default: ClusterProperty clusterset.k8s.io',
    })
    .option('region', { type: 'string', describe: 'AWS region (default: the SDK chain)' })
    .option('cloudmap-endpoint', {
      type: 'string',
      describe: 'Cloud Map endpoint URL (emulator); default AWS_ENDPOINT_URL_SERVICEDISCOVERY',
    })
    .option('assume-role-arn', {
      type: 'string',
      describe: 'role to assume for Cloud Map (cross-account)',
    })
    .option('assume-role-external-id', {
      type: 'string',
      describe: 'external ID for --assume-role-arn',
    })
    .option('poll-slow-seconds', {
      type: 'number',
      default: 60,
      describe: 'period of ListNamespaces/ListServices',
    })
    .option('poll-fast-seconds', {
      type: 'number',
      default: 5,
      describe: 'period of DiscoverInstancesRevision per service',
    })
    .option('poll-resync-seconds', {
      type: 'number',
      default: 600,
      describe: 'period of the full DiscoverInstances backstop',
    })
    .option('poll-jitter', {
      type: 'number',
      default: 0.1,
      describe: 'random extra fraction of each period',
    })
    .option('poll-max-backoff-seconds', {
      type: 'number',
      default: 300,
      describe: 'ceiling of the error backoff',
    })
    .option('request-budget', {
      type: 'number',
      describe: 'DiscoverInstancesRevision calls/s this agent may use; stretches the fast period',
    })
    .option('heartbeat-ttl-seconds', {
      type: 'number',
      default: 120,
      describe: 'a cluster whose heartbeat is older loses its endpoints',
    })
    .option('allowed-cidrs', {
      type: 'string',
      default: '',
      describe:
        'comma-separated CIDRs endpoint addresses must fall in (empty: any but the always-refused)',
    })
    .option('allowed-namespaces', {
      type: 'string',
      default: '',
      describe:
        'comma-separated namespaces imports may be created in (empty: any not denied); listing a denied one allows it',
    })
    .option('denied-namespaces', {
      type: 'string',
      default: DEFAULT_DENIED_NAMESPACES.join(','),
      describe: 'comma-separated namespaces imports are never created in (unless allowed by name)',
    })
    .option('max-imports-per-namespace', {
      type: 'number',
      default: DEFAULT_IMPORT_CAPS.perNamespace,
      describe: 'most ServiceImports this agent creates in one namespace',
    })
    .option('max-imports', {
      type: 'number',
      default: DEFAULT_IMPORT_CAPS.total,
      describe: 'most ServiceImports this agent manages in all',
    })
    .option('local-service-cidrs', {
      type: 'string',
      default: '',
      describe:
        'comma-separated Service CIDRs of this cluster, refused as endpoints (read from ServiceCIDR objects on k8s 1.33+; needed before)',
    })
    .option('local-addresses-seconds', {
      type: 'number',
      default: 60,
      describe: 'period of reading this cluster’s Service CIDRs and node addresses',
    })
    .option('external-services', {
      type: 'boolean',
      default: true,
      describe:
        'import the non-Kubernetes Cloud Map services users select with CloudMapServiceImport objects',
    })
    .option('external-poll-seconds', {
      type: 'number',
      default: 10,
      describe:
        'period of reading each selected non-Kubernetes service (one DiscoverInstances each)',
    })
    .option('workers', { type: 'number', default: 4 })
    .option('max-endpoints-per-slice', { type: 'number', default: 100 })
    .option('metrics-port', { type: 'number', default: 8080 })
    .option('health-port', { type: 'number', default: 8081 })
    .option('bind-address', { type: 'string', default: '0.0.0.0' })
    .option('leader-elect', { type: 'boolean', default: true })
    .option('lease-namespace', { type: 'string', default: 'cloudmap-mcs-system' })
    .option('lease-name', { type: 'string', default: 'cloudmap-mcs-import-agent' })
    .option('identity', {
      type: 'string',
      describe: 'leader-election identity (default: hostname + pid)',
    })
    .option('log-level', {
      choices: ['error', 'warn', 'info', 'debug'] as const,
      default: 'info' as const,
    })
    .option('log-format', { choices: ['json', 'text'] as const, default: 'json' as const })
    .parseSync();

  const positive = (name: string, v: number): number => {
    if (!Number.isFinite(v) || v <= 0)
      throw new ConfigError(`--${name} must be a positive number, got ${String(v)}`);
    return v;
  };
  const cidrList = (flag: string, value: string): string[] => {
    const list = value
      .split(',')
      .map((c) => c.trim())
      .filter((c) => c !== '');
    for (const cidr of list) {
      try {
        parseCidr(cidr);
      } catch (error) {
        throw new ConfigError(
          `--${flag}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return list;
  };
  const namespaceList = (flag: string, value: string): string[] => {
    const names = value
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    for (const n of names) {
      if (n.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n))
        throw new ConfigError(`--${flag}: "${n}" is not a namespace name (RFC 1123 label)`);
    }
    return names;
  };
  const allowedCidrs = cidrList('allowed-cidrs', args.allowedCidrs);
  const localServiceCidrs = cidrList('local-service-cidrs', args.localServiceCidrs);
  if (args.pollJitter < 0 || args.pollJitter > 1)
    throw new ConfigError('--poll-jitter must be within 0..1');
  const maxPerSlice = positive('max-endpoints-per-slice', args.maxEndpointsPerSlice);
  if (maxPerSlice > 1000)
    throw new ConfigError('--max-endpoints-per-slice must be at most 1000 (EndpointSlice limit)');
  const config: ImportAgentConfig = {
    pollSlowMs: positive('poll-slow-seconds', args.pollSlowSeconds) * 1000,
    pollFastMs: positive('poll-fast-seconds', args.pollFastSeconds) * 1000,
    pollResyncMs: positive('poll-resync-seconds', args.pollResyncSeconds) * 1000,
    pollJitter: args.pollJitter,
    pollMaxBackoffMs: positive('poll-max-backoff-seconds', args.pollMaxBackoffSeconds) * 1000,
    heartbeatTtlMs: positive('heartbeat-ttl-seconds', args.heartbeatTtlSeconds) * 1000,
    allowedCidrs,
    namespaces: {
      allowed: namespaceList('allowed-namespaces', args.allowedNamespaces),
      denied: namespaceList('denied-namespaces', args.deniedNamespaces),
    },
    caps: {
      perNamespace: Math.floor(positive('max-imports-per-namespace', args.maxImportsPerNamespace)),
      total: Math.floor(positive('max-imports', args.maxImports)),
    },
    localServiceCidrs,
    localAddressesPeriodMs: positive('local-addresses-seconds', args.localAddressesSeconds) * 1000,
    externalServices: args.externalServices,
    externalPollMs: positive('external-poll-seconds', args.externalPollSeconds) * 1000,
    workers: Math.floor(positive('workers', args.workers)),
    maxEndpointsPerSlice: Math.floor(maxPerSlice),
    metricsPort: args.metricsPort,
    healthPort: args.healthPort,
    bindAddress: args.bindAddress,
    leaderElect: args.leaderElect,
    leaseNamespace: args.leaseNamespace,
    leaseName: args.leaseName,
    identity: args.identity ?? `${hostname}-${String(process.pid)}`,
    logLevel: args.logLevel,
    logFormat: args.logFormat,
  };
  const kubeconfig = args.kubeconfig ?? env['KUBECONFIG'];
  if (kubeconfig !== undefined && kubeconfig !== '') config.kubeconfig = kubeconfig;
  if (args.clustersetId !== undefined) config.clustersetId = args.clustersetId;
  if (args.clusterId !== undefined) config.clusterId = args.clusterId;
  const region = args.region ?? env['AWS_REGION'];
  if (region !== undefined && region !== '') config.region = region;
  const endpoint = args.cloudmapEndpoint ?? env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
  if (endpoint !== undefined && endpoint !== '') config.cloudMapEndpoint = endpoint;
  if (args.assumeRoleArn !== undefined) config.assumeRoleArn = args.assumeRoleArn;
  if (args.assumeRoleExternalId !== undefined) {
    if (args.assumeRoleArn === undefined)
      throw new ConfigError('--assume-role-external-id needs --assume-role-arn');
    config.assumeRoleExternalId = args.assumeRoleExternalId;
  }
  if (args.requestBudget !== undefined)
    config.requestBudgetPerSecond = positive('request-budget', args.requestBudget);
  return config;
}
