import type { Options } from 'yargs';
import { parseCidr } from '@cloudmap-mcs/core';
import type { PollPeriods } from './poller/schedule.js';
import {
  ConfigError,
  list,
  nonNegative,
  positive,
  type CommonConfig,
  type ConfigSpec,
} from '@cloudmap-mcs/core/agent';
import {
  DEFAULT_DENIED_NAMESPACES,
  DEFAULT_IMPORT_CAPS,
  type ImportCaps,
  type NamespacePolicy,
} from './reconcile/scope.js';

/**
 * The import agent's own configuration (docs/architecture.md#configuration); the flags both agents share (cluster
 * identity, AWS, workers, leader election, ports, logging) are core's `CommonConfig`
 * (docs/install.md lists every flag). Flag `--poll-fast-seconds` ⇔ env `MCS_POLL_FAST_SECONDS`.
 */
export interface ImportOwnConfig {
  pollSlowMs: number;
  pollFastMs: number;
  /** The change feed's revision check (ADR 0018); 0: no feed, every service at pollFastMs. */
  pollFeedMs: number;
  pollHeartbeatMs: number;
  pollResyncMs: number;
  /** Calls a minute the backstop reads and (feed on) the listing may use, half each. */
  pollBackgroundBudget: number;
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
  maxEndpointsPerSlice: number;
}

export type ImportAgentConfig = CommonConfig & ImportOwnConfig;

/** The poller's periods from the flags; the background budget is half backstop, half listing. */
export function pollPeriodsOf(config: ImportOwnConfig): PollPeriods {
  return {
    slowMs: config.pollSlowMs,
    fastMs: config.pollFastMs,
    feedMs: config.pollFeedMs,
    heartbeatMs: config.pollHeartbeatMs,
    resyncMs: config.pollResyncMs,
    resyncBudgetPerMinute: config.pollBackgroundBudget / 2,
    listingBudgetPerMinute: config.pollBackgroundBudget / 2,
    jitter: config.pollJitter,
    maxBackoffMs: config.pollMaxBackoffMs,
  };
}

const OPTIONS = {
  'poll-slow-seconds': {
    type: 'number',
    default: 60,
    describe: 'period of ListNamespaces/ListServices',
  },
  'poll-feed-seconds': {
    type: 'number',
    default: 1.2,
    describe:
      'period of the DiscoverInstancesRevision of the clusterset change feed; when it moves, only the services it names are read (0: no feed, every service at --poll-fast-seconds)',
  },
  'poll-fast-seconds': {
    type: 'number',
    default: 5,
    describe:
      'period of DiscoverInstancesRevision per service the change feed does not vouch for (records of writers that do not write it: the AWS controller, older agents)',
  },
  'poll-heartbeat-seconds': {
    type: 'number',
    default: 30,
    describe: 'period of the DiscoverInstances of each namespace’s heartbeat service',
  },
  'poll-resync-seconds': {
    type: 'number',
    default: 3600,
    describe:
      'every service is read again (DiscoverInstances) within this period, one at a time, as a backstop',
  },
  'poll-background-budget': {
    type: 'number',
    default: 4,
    describe:
      'Cloud Map calls a minute the backstop reads and, with the change feed, listings of more than one page per namespace may use (half each); more services stretch their periods instead of raising idle cost; it caps a short --poll-resync-seconds too (0: no limit)',
  },
  'poll-jitter': { type: 'number', default: 0.1, describe: 'random extra fraction of each period' },
  'poll-max-backoff-seconds': {
    type: 'number',
    default: 300,
    describe: 'ceiling of the error backoff',
  },
  'request-budget': {
    type: 'number',
    describe: 'DiscoverInstancesRevision calls/s this agent may use; stretches the fast period',
  },
  'heartbeat-ttl-seconds': {
    type: 'number',
    default: 120,
    describe: 'a cluster whose heartbeat is older loses its endpoints',
  },
  'allowed-cidrs': {
    type: 'string',
    default: '',
    describe:
      'comma-separated CIDRs endpoint addresses must fall in (empty: any but the always-refused)',
  },
  'allowed-namespaces': {
    type: 'string',
    default: '',
    describe:
      'comma-separated namespaces imports may be created in (empty: any not denied); listing a denied one allows it',
  },
  'denied-namespaces': {
    type: 'string',
    default: DEFAULT_DENIED_NAMESPACES.join(','),
    describe: 'comma-separated namespaces imports are never created in (unless allowed by name)',
  },
  'max-imports-per-namespace': {
    type: 'number',
    default: DEFAULT_IMPORT_CAPS.perNamespace,
    describe: 'most ServiceImports this agent creates in one namespace',
  },
  'max-imports': {
    type: 'number',
    default: DEFAULT_IMPORT_CAPS.total,
    describe: 'most ServiceImports this agent manages in all',
  },
  'local-service-cidrs': {
    type: 'string',
    default: '',
    describe:
      'comma-separated Service CIDRs of this cluster, refused as endpoints (read from ServiceCIDR objects on k8s 1.33+; needed before)',
  },
  'local-addresses-seconds': {
    type: 'number',
    default: 60,
    describe: 'period of reading this cluster’s Service CIDRs and node addresses',
  },
  'external-services': {
    type: 'boolean',
    default: true,
    describe:
      'import the non-Kubernetes Cloud Map services users select with CloudMapServiceImport objects',
  },
  'external-poll-seconds': {
    type: 'number',
    default: 10,
    describe: 'period of reading each selected non-Kubernetes service (one DiscoverInstances each)',
  },
  'max-endpoints-per-slice': { type: 'number', default: 100 },
} as const satisfies Record<string, Options>;

const cidrList = (flag: string, value: string): string[] => {
  const cidrs = list(value);
  for (const cidr of cidrs) {
    try {
      parseCidr(cidr);
    } catch (error) {
      throw new ConfigError(`--${flag}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return cidrs;
};

const namespaceList = (flag: string, value: string): string[] => {
  const names = list(value);
  for (const n of names) {
    if (n.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n))
      throw new ConfigError(`--${flag}: "${n}" is not a namespace name (RFC 1123 label)`);
  }
  return names;
};

export const importConfigSpec: ConfigSpec<typeof OPTIONS, ImportOwnConfig> = {
  name: 'import-agent',
  usage: "Imports the clusterset's Cloud Map services into this cluster.",
  defaults: { leaseName: 'cloudmap-mcs-import-agent', healthPort: 8081, metricsPort: 8080 },
  options: OPTIONS,
  build(args) {
    if (args.pollJitter < 0 || args.pollJitter > 1)
      throw new ConfigError('--poll-jitter must be within 0..1');
    const maxPerSlice = positive('max-endpoints-per-slice', args.maxEndpointsPerSlice);
    if (maxPerSlice > 1000)
      throw new ConfigError('--max-endpoints-per-slice must be at most 1000 (EndpointSlice limit)');
    const config: ImportOwnConfig = {
      pollSlowMs: positive('poll-slow-seconds', args.pollSlowSeconds) * 1000,
      pollFastMs: positive('poll-fast-seconds', args.pollFastSeconds) * 1000,
      pollFeedMs: nonNegative('poll-feed-seconds', args.pollFeedSeconds) * 1000,
      pollHeartbeatMs: positive('poll-heartbeat-seconds', args.pollHeartbeatSeconds) * 1000,
      pollResyncMs: positive('poll-resync-seconds', args.pollResyncSeconds) * 1000,
      pollBackgroundBudget: nonNegative('poll-background-budget', args.pollBackgroundBudget),
      pollJitter: args.pollJitter,
      pollMaxBackoffMs: positive('poll-max-backoff-seconds', args.pollMaxBackoffSeconds) * 1000,
      heartbeatTtlMs: positive('heartbeat-ttl-seconds', args.heartbeatTtlSeconds) * 1000,
      allowedCidrs: cidrList('allowed-cidrs', args.allowedCidrs),
      namespaces: {
        allowed: namespaceList('allowed-namespaces', args.allowedNamespaces),
        denied: namespaceList('denied-namespaces', args.deniedNamespaces),
      },
      caps: {
        perNamespace: Math.floor(
          positive('max-imports-per-namespace', args.maxImportsPerNamespace),
        ),
        total: Math.floor(positive('max-imports', args.maxImports)),
      },
      localServiceCidrs: cidrList('local-service-cidrs', args.localServiceCidrs),
      localAddressesPeriodMs:
        positive('local-addresses-seconds', args.localAddressesSeconds) * 1000,
      externalServices: args.externalServices,
      externalPollMs: positive('external-poll-seconds', args.externalPollSeconds) * 1000,
      maxEndpointsPerSlice: Math.floor(maxPerSlice),
    };
    if (args.requestBudget !== undefined)
      config.requestBudgetPerSecond = positive('request-budget', args.requestBudget);
    return config;
  },
};
