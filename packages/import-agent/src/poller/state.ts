import {
  Attr,
  baseServiceName,
  HEARTBEAT_SERVICE_NAME,
  isCloudMapError,
  logFields,
  type CloudMapInstance,
  type CloudMapPort,
  type Clock,
  type Logger,
} from '@cloudmap-mcs/core';
import type { ServiceSnapshot, SnapshotHealth } from './snapshot.js';
import type { PollerOptions } from './options.js';

/**
 * The poller's shared state (poller.ts composes it with the rounds): the snapshot of every
 * tracked service, reachability, health reporting and change notifications. Every round
 * reads and writes through it, so there is one place that decides what "reachable",
 * "synced" and "failing" mean.
 */
export interface PollerState {
  readonly opts: PollerOptions;
  readonly port: PollerPort;
  readonly clock: Clock;
  readonly log: Logger;
  readonly now: () => number;
  readonly concurrency: number;
  readonly services: Map<string, ServiceSnapshot>;
  /** ListServices' InstanceCount per tracked service at the last listing (listing.ts). */
  readonly instanceCounts: Map<string, number>;
  /**
   * The last listing: its calls (ListNamespaces + estimated ListServices pages), and whether
   * some namespace took more than one page.
   */
  lastListing: { calls: number; paged: boolean };
  /**
   * Per local Cloud Map namespace listed so far: its ID, its ListServices pages at the last
   * listing, and when it was last listed (clock ms; a listing of its own counts, feedless.ts).
   */
  readonly namespaceListings: Map<string, { id: string; pages: number; listedAt: number }>;
  synced: boolean;
  /**
   * Whether Cloud Map cannot be reached from here: a round in which no call succeeded, or a
   * call that got no answer (network, 5xx, its deadline) while no other call succeeded (see
   * `watchedPort`). Then reads are not attempted and the fast round only probes.
   */
  unreachable: boolean;
  /** Successful calls so far, to tell a round in which none succeeded. */
  successes: number;
  lastGoodMs?: number;
  /**
   * Per local Cloud Map namespace: wall time of its last good read, a listing (or resync) in
   * which it was listed and none of its services failed (`markNamespacesGood`). Namespaces no
   * longer listed are dropped: one entry per namespace this agent imports from.
   */
  readonly namespaceGoodMs: Map<string, number>;
  /**
   * Wall time the latest outage ended (the first successful call after a round in which none
   * succeeded). A service last confirmed before it was not read during the outage, whether or
   * not a read of it failed: with the change feed most services are not read at all while the
   * poller only probes, so a failed read alone does not tell a blind period (reads.ts).
   */
  outageEndedAtMs?: number;
  /** Called after each successful Cloud Map call: the first one ends an outage. */
  callSucceeded(): void;
  /** Cloud Map cannot be reached: said at once (metric, readiness, import conditions). */
  lostContact(): void;
  /** Set by the poller: what to do when an outage ends. */
  onRecovered: () => void;
  /** Set by the poller: a heartbeat service was read (the change feed's vouchers). */
  onHeartbeats: (namespace: string, instances: readonly CloudMapInstance[]) => void;
  markError(s: ServiceSnapshot, operation: string, error: unknown): void;
  readError(operation: string): void;
  notify(s: ServiceSnapshot): void;
  health(): SnapshotHealth;
  reportHealth(): void;
}

/** The Cloud Map calls the poller makes. */
export type PollerPort = Pick<
  CloudMapPort,
  'discoverInstances' | 'discoverInstancesRevision' | 'listNamespaces' | 'listServices'
>;

export const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Tracks a service not read yet. */
export function track(state: PollerState, namespace: string, name: string): ServiceSnapshot {
  const fresh: ServiceSnapshot = { namespace, name, instances: [] };
  state.services.set(keyOf(namespace, name), fresh);
  return fresh;
}

export const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * First-seen time per cluster id of a service's instances: kept for clusters still present,
 * `readAt` for new ones; clusters gone are forgotten (memory follows the data).
 */
export function firstSeen(
  before: Readonly<Record<string, number>> | undefined,
  instances: readonly CloudMapInstance[],
  readAt: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of instances) {
    const id = i.attributes[Attr.ClusterId];
    if (id === undefined || id in out) continue;
    out[id] = before?.[id] ?? readAt;
  }
  return out;
}

/** The namespaces named whose services all read well are good as of now. */
export function markNamespacesGood(state: PollerState, namespaces: Iterable<string>): void {
  const failing = new Set<string>();
  for (const s of state.services.values()) if (s.error !== undefined) failing.add(s.namespace);
  const now = state.now();
  for (const ns of namespaces) if (!failing.has(ns)) state.namespaceGoodMs.set(ns, now);
}

/** The plain fields of a new state (createPollerState adds the behaviour). */
function initialState(opts: PollerOptions, log: Logger) {
  return {
    opts,
    clock: opts.clock,
    log,
    now: opts.now ?? Date.now,
    // Parallel Cloud Map calls per round.
    concurrency: 8,
    services: new Map<string, ServiceSnapshot>(),
    instanceCounts: new Map<string, number>(),
    namespaceGoodMs: new Map<string, number>(),
    lastListing: { calls: 1, paged: false },
    namespaceListings: new Map<string, { id: string; pages: number; listedAt: number }>(),
    synced: false,
    unreachable: false,
    successes: 0,
  };
}

/**
 * The poller's port: a call that got no answer (a network failure, 5xx, or its deadline: the
 * client's calls all end within one) while no other call succeeded meanwhile means Cloud Map
 * cannot be reached from here. That is said when the call fails, not when its round ends: a
 * round of many calls into a connection that never answers would otherwise take one deadline
 * per call before anyone is told (issue 31).
 */
function watchedPort(port: CloudMapPort, poller: () => PollerState): PollerPort {
  const watch = async <T>(call: () => Promise<T>): Promise<T> => {
    const state = poller();
    const successes = state.successes;
    try {
      return await call();
    } catch (error) {
      if (isCloudMapError(error, 'ServiceUnavailable') && state.successes === successes)
        state.lostContact();
      throw error;
    }
  };
  // Spelled out, one method per call the poller makes, so the IAM analysis
  // (deploy/test/iam.test.ts) sees every Cloud Map action the import agent can cause.
  return {
    discoverInstances: (ns, name, query) => watch(() => port.discoverInstances(ns, name, query)),
    discoverInstancesRevision: (ns, name) => watch(() => port.discoverInstancesRevision(ns, name)),
    listNamespaces: () => watch(() => port.listNamespaces()),
    listServices: (namespaceId) => watch(() => port.listServices(namespaceId)),
  };
}

export function createPollerState(opts: PollerOptions): PollerState {
  const log = opts.logger.child({ [logFields.component]: 'poller' });
  let lastHealth = '';
  const state: PollerState = {
    ...initialState(opts, log),
    port: watchedPort(opts.port, () => state),
    onRecovered: () => {},
    lostContact() {
      if (state.unreachable) return;
      state.unreachable = true;
      state.reportHealth();
    },
    onHeartbeats: () => {},
    callSucceeded() {
      state.successes++;
      if (!state.unreachable) return;
      state.unreachable = false;
      state.outageEndedAtMs = state.now();
      log.info('cloud map reachable again', { lastGoodMs: state.lastGoodMs });
      state.onRecovered();
    },
    readError: (operation) => opts.metrics?.readError?.(operation),
    markError(s, operation, error) {
      state.readError(operation);
      const key = keyOf(s.namespace, s.name);
      const current = state.services.get(key) ?? s;
      if (current.error === undefined) {
        log.warn('cloud map read failed, keeping last good state', {
          [logFields.cloudMapOperation]: operation,
          [logFields.namespace]: s.namespace,
          [logFields.name]: s.name,
          [logFields.error]: describe(error),
        });
      }
      state.services.set(key, {
        ...current,
        error: { message: describe(error), sinceMs: current.error?.sinceMs ?? state.clock.now() },
      });
    },
    notify(s) {
      if (s.name !== HEARTBEAT_SERVICE_NAME)
        opts.onServiceChange(s.namespace, baseServiceName(s.name));
      else opts.onHeartbeatChange(s.namespace);
    },
    health() {
      const failing = [...state.services.values()].filter((s) => s.error !== undefined).length;
      const reachable = !state.unreachable;
      const since =
        state.lastGoodMs === undefined ? 'never' : new Date(state.lastGoodMs).toISOString();
      const message = reachable
        ? failing === 0
          ? 'Cloud Map snapshot current'
          : `${String(failing)} service(s) could not be read; serving their last good state`
        : `Cloud Map unreachable; serving the last good state (last full read: ${since})`;
      const out: SnapshotHealth = { reachable, message, failingServices: failing };
      if (state.lastGoodMs !== undefined) out.lastGoodMs = state.lastGoodMs;
      return out;
    },
    reportHealth() {
      const h = state.health();
      const key = `${String(state.synced)}|${String(h.reachable)}|${String(h.failingServices)}`;
      if (key === lastHealth) return;
      lastHealth = key;
      if (h.reachable)
        log.info('cloud map snapshot healthy', {
          synced: state.synced,
          failing: h.failingServices,
        });
      else
        log.warn('cloud map unreachable, keeping last good state', {
          lastGoodMs: state.lastGoodMs,
        });
      opts.onHealthChange?.(h, state.synced);
    },
  };
  return state;
}
