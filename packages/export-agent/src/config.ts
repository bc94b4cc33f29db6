import type { Options } from 'yargs';
import {
  ConfigError,
  nonNegative,
  positive,
  type CommonConfig,
  type ConfigSpec,
} from '@cloudmap-mcs/core/agent';
// The release version: tools/set-version.sh stamps it here from the root package.json (the
// bundle inlines it).
import pkg from '../package.json' with { type: 'json' };
import { isLabelKey, parseLabelKeyList } from './pod-label-attributes.js';

/**
 * The export agent's own configuration; the flags both agents share (cluster identity, AWS,
 * workers, leader election, ports, logging) are core's `CommonConfig` (docs/install.md lists
 * every flag).
 */
export interface ExportOwnConfig {
  resyncSeconds: number;
  /** Calls a minute the resync and the peer watch's counts may use (half each; 0: no limit). */
  backgroundBudget: number;
  /**
   * Period of the peer watch (others' changes): the change feed's revision, and each exported
   * service with records of clusters that do not write the feed; 0 turns it off.
   */
  peerCheckSeconds: number;
  /** DiscoverInstancesRevision calls per second the per-service peer checks may use. */
  peerCheckBudget: number;
  heartbeatSeconds: number;
  /** Write the clusterset change feed (ADR 0018). */
  changeFeed: boolean;
  /** At most one feed write per this many seconds. */
  feedIntervalSeconds: number;
  registerRatePerSecond: number;
  /**
   * DNS namespaces (`--dns-records`, ADR 0010): services created in DNS_PRIVATE namespaces get
   * DnsConfig; absent when off (the default).
   */
  dns?: { ttl: number; namespaceVpc?: string };
  /** Pod label keys every ServiceExport without the annotation exports as attributes. */
  podLabelAttributes: string[];
}

export type ExportAgentConfig = CommonConfig & ExportOwnConfig;

/**
 * Periods nobody deploying the agent has a reason to change (issue 31): constants, which tests
 * shorten through MCS_TEST_TIMINGS (docs/contributing.md#test-timings). Importers read
 * heartbeats every 30 s and judge them against their --heartbeat-ttl-seconds (120 s), so the
 * renewal period is part of the protocol's defaults rather than a local choice.
 */
export const EXPORT_TIMINGS = {
  /** Heartbeat renewal period. */
  heartbeatSeconds: 30,
  /** At most one change feed write per this many seconds (changes meanwhile coalesce). */
  feedIntervalSeconds: 1,
} as const satisfies Record<string, number>;

type ExportTimings = { [K in keyof typeof EXPORT_TIMINGS]: number };

const OPTIONS = {
  'resync-seconds': {
    type: 'number',
    default: 1800,
    describe:
      'period to re-check each export, a backstop that repairs records changed outside the agent (other clusters are followed by the peer watch); lower to repair sooner, within --background-budget',
  },
  'background-budget': {
    type: 'number',
    default: 4,
    describe:
      'Cloud Map calls a minute the resync and the peer watch’s instance counts may use (half each); more exports stretch their periods instead of raising idle cost; raise it for shorter periods with many exports (0: no limit)',
  },
  'peer-check-seconds': {
    type: 'number',
    default: 3,
    describe:
      'period of the peer watch, so conflicts follow other clusters: one revision check of the change feed, plus one per exported service with records of clusters that do not write the feed; ' +
      'raise to save calls, lower to see conflicts sooner (0: off, resync only)',
  },
  'peer-check-budget': {
    type: 'number',
    default: 100,
    describe:
      'per-service peer checks per second at most; more such exports stretch the period; lower it to share the account’s Cloud Map quota',
  },
  'change-feed': {
    type: 'boolean',
    default: true,
    describe:
      'write this cluster’s entry of the clusterset change feed (Cloud Map namespace _mcs-feed), so importers read only the services that changed; turn off only if importers must not rely on it',
  },
  'register-rate': {
    type: 'number',
    default: 20,
    describe:
      'RegisterInstance/DeregisterInstance calls per second: raise for large exports if the account’s Cloud Map quota allows, lower to leave quota to other writers',
  },
  'dns-records': {
    type: 'boolean',
    default: false,
    describe:
      'create services in DNS_PRIVATE namespaces with A/AAAA and SRV records (MULTIVALUE, custom health), so VPC clients outside Kubernetes resolve <service>.<namespace>',
  },
  'dns-ttl': {
    type: 'number',
    default: 10,
    describe:
      'TTL of those records, seconds: higher caches longer in VPC resolvers, lower follows endpoint changes sooner',
  },
  'dns-namespace-vpc': {
    type: 'string',
    describe:
      'with --dns-records: create absent Cloud Map namespaces as DNS_PRIVATE in this VPC (vpc-…) instead of HTTP',
  },
  'pod-label-attributes': {
    type: 'string',
    default: '',
    describe:
      'comma-separated pod label keys written as POD_LABEL_<key> attributes on endpoint instances of every ServiceExport without the cloudmap-mcs.io/pod-label-attributes annotation, for clients that filter by them',
  },
} as const satisfies Record<string, Options>;

export const exportConfigSpec: ConfigSpec<typeof OPTIONS, ExportOwnConfig, ExportTimings> = {
  name: 'export-agent',
  usage: 'Exports ServiceExports of this cluster to AWS Cloud Map.',
  // One server for /healthz, /readyz and /metrics unless --metrics-port says otherwise.
  version: pkg.version,
  defaults: { leaseName: 'cloudmap-mcs-export-agent', healthPort: 8080 },
  options: OPTIONS,
  timings: EXPORT_TIMINGS,
  build(args, _common, t) {
    const config: ExportOwnConfig = {
      resyncSeconds: positive('resync-seconds', args.resyncSeconds),
      backgroundBudget: nonNegative('background-budget', args.backgroundBudget),
      peerCheckSeconds: nonNegative('peer-check-seconds', args.peerCheckSeconds),
      peerCheckBudget: positive('peer-check-budget', args.peerCheckBudget),
      heartbeatSeconds: t.heartbeatSeconds,
      changeFeed: args.changeFeed,
      feedIntervalSeconds: t.feedIntervalSeconds,
      registerRatePerSecond: positive('register-rate', args.registerRate),
      podLabelAttributes: parseLabelKeyList(args.podLabelAttributes),
    };
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
    return config;
  },
};
