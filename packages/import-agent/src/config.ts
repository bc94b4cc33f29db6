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
// The release version: tools/set-version.sh stamps it here from the root package.json (the
// bundle inlines it).
import pkg from '../package.json' with { type: 'json' };
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
  /** How often each selected non-Kubernetes service (CloudMapServiceImport, ADR 0014) is read. */
  externalPollMs: number;
}

export type ImportAgentConfig = CommonConfig & ImportOwnConfig;

/**
 * Periods nobody deploying the agent has a reason to change (issue 31): constants, which tests
 * shorten through MCS_TEST_TIMINGS (docs/contributing.md#test-timings), in seconds like the
 * flags they were. The heartbeat read matches the export agent's 30 s renewal; the listing,
 * the backstop and the error backoff are bounded in cost by --poll-background-budget instead.
 */
const IMPORT_TIMINGS = {
  /** ListNamespaces/ListServices. */
  pollSlowSeconds: 60,
  /** DiscoverInstances of each namespace's heartbeat service. */
  pollHeartbeatSeconds: 30,
  /** The backstop: every service read again within this period (stretched by the budget). */
  pollResyncSeconds: 3600,
  /** Random extra fraction of each period (0..1), so importers do not call in step. */
  pollJitter: 0.1,
  /** Ceiling of the error backoff of the slow and resync rounds. */
  pollMaxBackoffSeconds: 300,
  /** Reading this cluster's Service CIDRs and node addresses. */
  localAddressesSeconds: 60,
  /** Reading each selected non-Kubernetes service. */
  externalPollSeconds: 10,
} as const satisfies Record<string, number>;

type ImportTimings = { [K in keyof typeof IMPORT_TIMINGS]: number };

/** The poller's periods from the config; the background budget is half backstop, half listing. */
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
  'poll-feed-seconds': {
    type: 'number',
    default: 1.2,
    describe:
      'period of the revision check of the clusterset change feed; when it moves only the services it names are read. ' +
      'The latency of every import against one call per period: raise it to save calls, lower it for faster imports (0: no feed, every service at --poll-fast-seconds)',
  },
  'poll-fast-seconds': {
    type: 'number',
    default: 5,
    describe:
      'period of the revision check per service the change feed does not vouch for (the AWS controller’s or non-Kubernetes records, older agents), ' +
      'and of the listing of each namespace holding records of a writer without a feed (its new services); ' +
      'lower while migrating from the AWS controller for faster imports, higher to save calls',
  },
  'poll-background-budget': {
    type: 'number',
    default: 4,
    describe:
      'Cloud Map calls a minute the hourly backstop reads and, with the change feed, listings of more than one page per namespace may use (half each); ' +
      'more services stretch their periods instead of raising idle cost: raise it for a shorter backstop with many services (0: no limit)',
  },
  'request-budget': {
    type: 'number',
    describe:
      'revision checks per second this agent may spend on per-service checks (their period stretches to services / budget); ' +
      'set it with many clusters and services so the account’s Cloud Map quota is shared',
  },
  'heartbeat-ttl-seconds': {
    type: 'number',
    default: 120,
    describe:
      'a cluster not seen renewing its heartbeat for this long loses its endpoints: lower fails over faster (keep it well above 30 s, the renewal), higher rides out longer Cloud Map outages of the exporter',
  },
  'allowed-cidrs': {
    type: 'string',
    default: '',
    describe:
      'comma-separated CIDRs endpoint addresses must fall in: set it to the clusterset’s Pod and node ranges so a forged record cannot point elsewhere (empty: any but the always-refused)',
  },
  'local-service-cidrs': {
    type: 'string',
    default: '',
    describe:
      'comma-separated Service CIDRs of this cluster, refused as endpoints; needed before Kubernetes 1.33 (read from ServiceCIDR objects since)',
  },
  'allowed-namespaces': {
    type: 'string',
    default: '',
    describe:
      'comma-separated namespaces imports may be created in, to confine them (empty: any not denied); listing a denied one allows it',
  },
  'denied-namespaces': {
    type: 'string',
    default: DEFAULT_DENIED_NAMESPACES.join(','),
    describe:
      'comma-separated namespaces imports are never created in (unless allowed by name); add your platform’s own namespaces',
  },
  'max-imports-per-namespace': {
    type: 'number',
    default: DEFAULT_IMPORT_CAPS.perNamespace,
    describe:
      'most ServiceImports this agent creates in one namespace: a bound on what a flood of foreign records can create; raise for a namespace with more',
  },
  'max-imports': {
    type: 'number',
    default: DEFAULT_IMPORT_CAPS.total,
    describe: 'most ServiceImports this agent manages in all; raise for a larger clusterset',
  },
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

export const importConfigSpec: ConfigSpec<typeof OPTIONS, ImportOwnConfig, ImportTimings> = {
  name: 'import-agent',
  usage: "Imports the clusterset's Cloud Map services into this cluster.",
  version: pkg.version,
  defaults: { leaseName: 'cloudmap-mcs-import-agent', healthPort: 8081, metricsPort: 8080 },
  options: OPTIONS,
  timings: IMPORT_TIMINGS,
  timingsZeroAllowed: ['pollJitter'],
  build(args, _common, t) {
    if (t.pollJitter > 1)
      throw new ConfigError('MCS_TEST_TIMINGS: "pollJitter" must be within 0..1');
    const config: ImportOwnConfig = {
      pollSlowMs: t.pollSlowSeconds * 1000,
      pollFastMs: positive('poll-fast-seconds', args.pollFastSeconds) * 1000,
      pollFeedMs: nonNegative('poll-feed-seconds', args.pollFeedSeconds) * 1000,
      pollHeartbeatMs: t.pollHeartbeatSeconds * 1000,
      pollResyncMs: t.pollResyncSeconds * 1000,
      pollBackgroundBudget: nonNegative('poll-background-budget', args.pollBackgroundBudget),
      pollJitter: t.pollJitter,
      pollMaxBackoffMs: t.pollMaxBackoffSeconds * 1000,
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
      localAddressesPeriodMs: t.localAddressesSeconds * 1000,
      externalPollMs: t.externalPollSeconds * 1000,
    };
    if (args.requestBudget !== undefined)
      config.requestBudgetPerSecond = positive('request-budget', args.requestBudget);
    return config;
  },
};
