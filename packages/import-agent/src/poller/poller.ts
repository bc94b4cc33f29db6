import {
  createFeedFollower,
  decodeHeartbeats,
  HEARTBEAT_SERVICE_NAME,
  isShardServiceName,
  type FeedFollower,
} from '@cloudmap-mcs/core';
import {
  background,
  createRoundLoop,
  recovered,
  requestSweep,
  runRound,
  startLoop,
  stopLoop,
  type RoundLoop,
} from './loop.js';
import type { Poller, PollerOptions } from './options.js';
import { createServiceReads, type ServiceReads } from './reads.js';
import { coveredByFeed, everyWriterVouched } from './coverage.js';
import { pollRounds } from './rounds.js';
import { mergedSnapshot } from './shards.js';
import type { ServiceSnapshot } from './snapshot.js';
import { createPollerState, keyOf, type PollerState } from './state.js';

export type { Poller, PollerMetrics, PollerOptions } from './options.js';

/**
 * Keeps a snapshot of Cloud Map for one clusterset, as cheaply as Cloud Map allows:
 *
 * - fast round (every `feedMs`): the change feed's revision (feed.ts, ADR 0018); when it
 *   moved, the services it names are read, new ones at once. Services the feed does not vouch
 *   for (records of clusters that do not write it: the AWS controller, non-Kubernetes
 *   writers, older agents; services whose last read failed) get a DiscoverInstancesRevision
 *   every `fastMs`, heartbeat services every `heartbeatMs`. Without a feed (`feedMs` 0) the
 *   round runs every `fastMs` and checks every service, as the AWS controller does (docs/architecture.md#the-aws-controller, item 2).
 * - slow round (`slowMs`): namespaces and services are listed (listing.ts).
 * - resync (`resyncMs`), and sweeps the feed asks for: every service is read again.
 *
 * Only namespaces that exist in this cluster are read (namespace sameness) and only records
 * of this clusterset. A failed read keeps the last good state; a service is dropped only when
 * a successful listing no longer shows it.
 *
 * Outages (issue 11): while no call succeeds, the fast round shrinks to one probe call per
 * period (no growing backoff), and the first successful call resets every backoff and runs
 * a slow round at once. Each snapshot entry says when it was last confirmed (`confirmedAtMs`).
 */
export function createPoller(opts: PollerOptions): Poller {
  const state = createPollerState(opts);
  const { periods } = opts;
  const reads = createServiceReads(state);
  const loop = createRoundLoop(state);
  const feed = loop.feedMs > 0 ? createPollerFeed(state) : undefined;
  if (feed !== undefined)
    state.onHeartbeats = (namespace, instances) =>
      feed.observeHeartbeats(
        namespace,
        decodeHeartbeats(instances, { clustersetId: opts.clustersetId }).heartbeats,
      );
  state.onRecovered = () => recovered(loop);
  loop.rounds = pollRounds({
    state,
    reads,
    feed,
    periods,
    feedMs: loop.feedMs,
    heartbeatMs: periods.heartbeatMs ?? periods.fastMs,
    sweep: () => requestSweep(loop),
    knownHeartbeatNamespaces: new Set(),
    recheck: { askedAt: undefined },
    background: (work) => background(loop, work),
    feedReads: { running: false },
    feedlessListing: { running: false },
    heartbeatLookedFor: new Map(),
  });
  return pollerApi(state, reads, feed, loop);
}

/** The clusterset change feed's follower (core), read with the poller's port and clock. */
function createPollerFeed(state: PollerState): FeedFollower {
  const { opts, port } = state;
  const succeeded = <T>(answer: T): T => {
    state.callSucceeded();
    return answer;
  };
  return createFeedFollower({
    cloudMap: {
      discoverInstancesRevision: (ns, name) =>
        port.discoverInstancesRevision(ns, name).then(succeeded),
      discoverInstances: (ns, name, query) =>
        port.discoverInstances(ns, name, query).then(succeeded),
    },
    clustersetId: opts.clustersetId,
    heartbeatTtlMs: opts.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS,
    clock: state.clock,
    logger: state.log,
    isLocalNamespace: (ns) => opts.isLocalNamespace(ns),
    metrics: {
      sweep: (reason) => opts.metrics?.feedSweep?.(reason),
      rejected: () => opts.metrics?.feedRejected?.(),
      unvouched: (reason) => opts.metrics?.feedUnvouched?.(reason),
    },
  });
}

/** The import agent's default `--heartbeat-ttl-seconds`. */
const DEFAULT_HEARTBEAT_TTL_MS = 120_000;

/**
 * What the importer reads (Kubernetes Services: base merged with shards, and heartbeats),
 * and the loop's start and stop.
 */
function pollerApi(
  state: PollerState,
  reads: ServiceReads,
  feed: FeedFollower | undefined,
  loop: RoundLoop,
): Poller {
  const { services, opts } = state;
  /** A Kubernetes Service's snapshot: its base service merged with its shards. */
  const view = (s: ServiceSnapshot): ServiceSnapshot =>
    mergedSnapshot(s, opts.clustersetId, (name) => services.get(keyOf(s.namespace, name)));
  const isImport = (s: ServiceSnapshot): boolean =>
    s.name !== HEARTBEAT_SERVICE_NAME && !isShardServiceName(s.name);

  return {
    get synced() {
      return state.synced;
    },
    get tracked() {
      return services.size;
    },
    get feedCovered() {
      const allVouched = everyWriterVouched(feed, services.values());
      return [...services.values()].filter((s) => coveredByFeed(feed, reads, s, allVouched)).length;
    },
    get(namespace, name) {
      const s = services.get(keyOf(namespace, name));
      return s === undefined || !isImport(s) ? undefined : view(s);
    },
    services(namespace) {
      return [...services.values()]
        .filter((s) => s.namespace === namespace && isImport(s))
        .map(view);
    },
    allServices() {
      return [...services.values()].filter(isImport).map(view);
    },
    heartbeatService(namespace) {
      return services.get(keyOf(namespace, HEARTBEAT_SERVICE_NAME));
    },
    health: () => state.health(),
    start: () => startLoop(loop),
    stop: () => stopLoop(loop),
    async refreshNow() {
      await runRound(loop, 'slow');
    },
  };
}
