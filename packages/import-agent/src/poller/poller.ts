import {
  Attr,
  HEARTBEAT_SERVICE_NAME,
  isShardServiceName,
  logFields,
  type CloudMapInstance,
  type CloudMapPort,
  type Clock,
  type Logger,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import { backoff, fastPeriodFor, withJitter, type PollPeriods } from './schedule.js';
import {
  changedService,
  mergedSnapshot,
  normalized,
  queryFor,
  referencedShards,
} from './shards.js';
import {
  sameInstances,
  type CloudMapSnapshot,
  type ServiceSnapshot,
  type SnapshotHealth,
} from './snapshot.js';

/**
 * Keeps a snapshot of Cloud Map for one clusterset, as cheaply as Cloud Map allows
 * (aws-controller.md §9.1 fixed): namespaces and services are listed at a slow period;
 * every service's DiscoverInstancesRevision is checked at a fast period and DiscoverInstances
 * is called only when the revision moved; a slow resync re-reads everything as a backstop.
 * Only namespaces that exist in this cluster are read (namespace sameness) and only records
 * of this clusterset (QueryParameters CLUSTERSET_ID). A failed read keeps the last good
 * state; a service is dropped only when a successful listing no longer shows it.
 *
 * Outages (issue 11): while no call succeeds, the fast round shrinks to one probe call per
 * fast period (no growing backoff), and the first successful call resets every backoff and
 * runs the full rounds at once, so the snapshot converges within one fast period of Cloud
 * Map coming back. Each snapshot entry says when it was last confirmed (`confirmedAtMs`),
 * so consumers judge ages against the data, never against the wall clock across an outage.
 */

export type RoundKind = 'slow' | 'fast' | 'resync';

export interface PollerMetrics {
  round?(kind: RoundKind, ok: boolean, durationMs: number): void;
  readError?(operation: string): void;
}

export interface PollerOptions {
  port: CloudMapPort;
  clock: Clock;
  /** Wall-clock ms since the epoch, for `confirmedAtMs` and first-seen times (default Date.now). */
  now?: () => number;
  logger: Logger;
  clustersetId: string;
  periods: PollPeriods;
  /** Revision calls per second this agent may spend; stretches the fast period. */
  requestBudgetPerSecond?: number;
  /** Parallel Cloud Map calls per round. */
  concurrency?: number;
  random?: () => number;
  /** Whether a namespace of that name exists in this cluster. */
  isLocalNamespace(name: string): boolean;
  onServiceChange(namespace: string, name: string): void;
  onHeartbeatChange(namespace: string): void;
  /** Called each time `synced` or reachability changes. */
  onHealthChange?(health: SnapshotHealth, synced: boolean): void;
  metrics?: PollerMetrics;
}

export interface Poller extends CloudMapSnapshot {
  start(): void;
  /** Stops scheduling and waits for the round in flight. */
  stop(): Promise<void>;
  /** Runs a slow round now (e.g. a namespace was created locally). */
  refreshNow(): Promise<void>;
  /**
   * A namespace was just created here: until its Cloud Map namespace shows up (for at most one
   * slow period), each fast round also lists the Cloud Map namespaces, and a listing of services
   * runs as soon as it appears. Apps are often deployed into a new namespace in every cluster at
   * once; the exporter creates the Cloud Map namespace seconds after the importer's refresh.
   */
  awaitNamespace(namespace: string): void;
  /** Services currently tracked, heartbeat services included. */
  readonly tracked: number;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

async function inPool<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(size, items.length)) }, worker));
}

/**
 * First-seen time per cluster id of a service's instances: kept for clusters still present,
 * `readAt` for new ones; clusters gone are forgotten (memory follows the data).
 */
function firstSeen(
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

const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

export function createPoller(opts: PollerOptions): Poller {
  const { port, clock, periods } = opts;
  const log = opts.logger.child({ [logFields.component]: 'poller' });
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const concurrency = opts.concurrency ?? 8;
  const services = new Map<string, ServiceSnapshot>();
  const failures: Record<RoundKind, number> = { slow: 0, fast: 0, resync: 0 };
  const timers: Partial<Record<RoundKind, TimerHandle>> = {};
  const inFlight = new Set<Promise<void>>();
  let synced = false;
  let stopped = true;
  let lastGoodMs: number | undefined;
  let lastHealth = '';
  // Whether the latest calls all failed: then the fast round only probes (see fastRound).
  let unreachable = false;
  let successes = 0; // successful calls so far, to tell a round in which none succeeded

  /** Called after each successful Cloud Map call: the first one ends an outage. */
  const callSucceeded = (): void => {
    successes++;
    if (!unreachable) return;
    unreachable = false;
    recovered();
  };

  /**
   * The first success after an outage: forget every backoff and run a slow round now (a
   * service created or deleted during the outage is found at once, not after up to
   * maxBackoffMs). A round in flight reschedules itself when it ends.
   */
  const recovered = (): void => {
    log.info('cloud map reachable again', { lastGoodMs });
    const slowFailed = failures.slow > 0;
    failures.slow = 0;
    failures.fast = 0;
    failures.resync = 0;
    const waiting = timers.slow;
    if (slowFailed && waiting !== undefined) {
      clock.clearTimer(waiting);
      delete timers.slow;
      schedule('slow', 0);
    }
  };

  // Each exporter's heartbeat carries a digest of the services it exports in the namespace
  // (HEARTBEAT_EXPORTS). When one moves, an export started or ended: a listing now finds a new
  // service within one fast period instead of at the next slow round (60 s by default).
  const exportDigests = new Map<string, string>();
  const exportsMoved = (s: ServiceSnapshot): boolean => {
    const prefix = `${s.namespace}/`;
    const seen = new Set<string>();
    let moved = false;
    for (const instance of s.instances) {
      const digest = instance.attributes[Attr.HeartbeatExports];
      if (digest === undefined) continue;
      const key = prefix + instance.id;
      seen.add(key);
      if (exportDigests.get(key) === digest) continue;
      // Before the first complete snapshot every service is being listed anyway.
      if (synced) moved = true;
      exportDigests.set(key, digest);
    }
    for (const key of [...exportDigests.keys()]) {
      if (key.startsWith(prefix) && !seen.has(key)) exportDigests.delete(key);
    }
    return moved;
  };

  // One listing queued behind the running one at most: a burst of heartbeat changes coalesces,
  // and a change seen while a listing runs still gets a listing after it.
  let listingQueued = false;
  const requestListing = (): void => {
    if (listingQueued || stopped) return;
    listingQueued = true;
    const listing = (async () => {
      while (running.slow !== undefined) await running.slow;
      listingQueued = false;
      if (!stopped) await run('slow');
    })();
    inFlight.add(listing);
    void listing.finally(() => inFlight.delete(listing));
  };

  const notify = (s: ServiceSnapshot): void => {
    if (s.name !== HEARTBEAT_SERVICE_NAME)
      return opts.onServiceChange(s.namespace, changedService(s.name));
    opts.onHeartbeatChange(s.namespace);
    if (exportsMoved(s)) {
      log.debug('exports changed in namespace; listing services', { namespace: s.namespace });
      requestListing();
    }
  };

  const health = (): SnapshotHealth => {
    const failing = [...services.values()].filter((s) => s.error !== undefined).length;
    const reachable = !unreachable;
    const since = lastGoodMs === undefined ? 'never' : new Date(lastGoodMs).toISOString();
    const message = reachable
      ? failing === 0
        ? 'Cloud Map snapshot current'
        : `${String(failing)} service(s) could not be read; serving their last good state`
      : `Cloud Map unreachable; serving the last good state (last full read: ${since})`;
    const out: SnapshotHealth = { reachable, message, failingServices: failing };
    if (lastGoodMs !== undefined) out.lastGoodMs = lastGoodMs;
    return out;
  };

  const reportHealth = (): void => {
    const h = health();
    const key = `${String(synced)}|${String(h.reachable)}|${String(h.failingServices)}`;
    if (key === lastHealth) return;
    lastHealth = key;
    if (h.reachable) log.info('cloud map snapshot healthy', { synced, failing: h.failingServices });
    else log.warn('cloud map unreachable, keeping last good state', { lastGoodMs });
    opts.onHealthChange?.(h, synced);
  };

  /** DiscoverInstances for one service; true when it succeeded. */
  const fetchInstances = async (s: ServiceSnapshot): Promise<boolean> => {
    try {
      const read = await port.discoverInstances(
        s.namespace,
        s.name,
        queryFor(s.name, opts.clustersetId),
      );
      const { revision } = read;
      const instances = normalized(s.name, read.instances);
      callSucceeded();
      const changed = !sameInstances(s.instances, instances);
      const readAt = now();
      const next: ServiceSnapshot = {
        ...s,
        instances,
        revision,
        fetchedAtMs: clock.now(),
        confirmedAtMs: readAt,
        clustersFirstSeenMs: firstSeen(s.clustersFirstSeenMs, instances, readAt),
      };
      const before = services.get(keyOf(s.namespace, s.name)) ?? s;
      if (before.error !== undefined) next.resumedAtMs = readAt;
      delete next.error;
      services.set(keyOf(s.namespace, s.name), next);
      // Its shards first, so the change is handled with them current.
      const ok = await readShards(next);
      if (changed) notify(next);
      return ok;
    } catch (error) {
      markError(s, 'discoverInstances', error);
      return false;
    }
  };

  /**
   * Reading S reads its shards (ADR 0015): a shard its export records name is read at once
   * when new, and when its revision moved otherwise, so a change inside a shard is seen even by
   * a reader told only "S changed" (the change feed names Kubernetes Services). True when
   * every read succeeded.
   */
  const readShards = async (base: ServiceSnapshot): Promise<boolean> => {
    let ok = true;
    for (const name of referencedShards(base, opts.clustersetId)) {
      const key = keyOf(base.namespace, name);
      let shard = services.get(key);
      if (shard === undefined) {
        shard = { namespace: base.namespace, name, instances: [] };
        services.set(key, shard);
      } else if (shard.revision !== undefined && shard.error === undefined) {
        try {
          const revision = await port.discoverInstancesRevision(base.namespace, name);
          callSucceeded();
          if (revision === shard.revision) {
            services.set(key, { ...shard, confirmedAtMs: now() });
            continue;
          }
        } catch (error) {
          markError(shard, 'discoverInstancesRevision', error);
          ok = false;
          continue;
        }
      }
      if (!(await fetchInstances(shard))) ok = false;
    }
    return ok;
  };

  const markError = (s: ServiceSnapshot, operation: string, error: unknown): void => {
    opts.metrics?.readError?.(operation);
    const current = services.get(keyOf(s.namespace, s.name)) ?? s;
    if (current.error === undefined) {
      log.warn('cloud map read failed, keeping last good state', {
        [logFields.cloudMapOperation]: operation,
        [logFields.namespace]: s.namespace,
        [logFields.name]: s.name,
        [logFields.error]: describe(error),
      });
    }
    services.set(keyOf(s.namespace, s.name), {
      ...current,
      error: { message: describe(error), sinceMs: current.error?.sinceMs ?? clock.now() },
    });
  };

  const slowRound = async (): Promise<boolean> => {
    let namespaces;
    try {
      namespaces = (await port.listNamespaces()).filter(
        (ns) => ns.type !== 'DNS_PUBLIC' && opts.isLocalNamespace(ns.name),
      );
      callSucceeded();
    } catch (error) {
      opts.metrics?.readError?.('listNamespaces');
      log.warn('listing cloud map namespaces failed', { [logFields.error]: describe(error) });
      return false;
    }
    let ok = true;
    const listed = new Set<string>();
    const unlisted = new Set<string>(); // namespaces whose services could not be listed
    await inPool(namespaces, concurrency, async (ns) => {
      try {
        for (const svc of await port.listServices(ns.id)) listed.add(keyOf(ns.name, svc.name));
        callSucceeded();
      } catch (error) {
        ok = false;
        unlisted.add(ns.name);
        opts.metrics?.readError?.('listServices');
        log.warn('listing cloud map services failed', {
          [logFields.cloudMapNamespace]: ns.name,
          [logFields.error]: describe(error),
        });
      }
    });
    // An awaited namespace stays awaited until a listing shows a service in it: the exporter
    // creates the Cloud Map namespace first and its services a moment later, and a listing in
    // between must not end the wait (the service would then wait for the next slow round).
    for (const ns of namespaces) {
      const prefix = `${ns.name}/`;
      if ([...listed].some((key) => key.startsWith(prefix))) awaited.delete(ns.name);
    }
    // A shard named by a tracked export record stays even if a listing that started before it
    // was created misses it (its reads fail, and keep the last good state, if it is gone).
    for (const s of services.values())
      for (const name of referencedShards(s, opts.clustersetId))
        listed.add(keyOf(s.namespace, name));
    // Gone: no longer listed by a listing that succeeded, or the namespace is not local any more.
    for (const [key, s] of services) {
      if (listed.has(key) || unlisted.has(s.namespace)) continue;
      services.delete(key);
      if (opts.isLocalNamespace(s.namespace) && s.instances.length > 0)
        notify({ ...s, instances: [] });
    }
    const fresh: ServiceSnapshot[] = [];
    for (const key of listed) {
      if (services.has(key)) continue;
      const [namespace = '', name = ''] = key.split('/');
      const s: ServiceSnapshot = { namespace, name, instances: [] };
      services.set(key, s);
      fresh.push(s);
    }
    await inPool(fresh, concurrency, async (s) => {
      if (!(await fetchInstances(s))) ok = false;
    });
    return ok;
  };

  /**
   * While Cloud Map is unreachable a fast round is one call: the revision of one service (the
   * namespace's heartbeat service first, which every live exporter moves), or a namespace
   * listing when nothing is tracked. True when it succeeded.
   */
  const probe = async (): Promise<boolean> => {
    const all = [...services.values()];
    const target = all.find((s) => s.name === HEARTBEAT_SERVICE_NAME) ?? all[0];
    try {
      if (target === undefined) await port.listNamespaces();
      else await port.discoverInstancesRevision(target.namespace, target.name);
      callSucceeded();
      return true;
    } catch (error) {
      opts.metrics?.readError?.(
        target === undefined ? 'listNamespaces' : 'discoverInstancesRevision',
      );
      log.debug('cloud map probe failed', { [logFields.error]: describe(error) });
      return false;
    }
  };

  // Local namespaces created recently whose Cloud Map namespace was not listed yet → since.
  const awaited = new Map<string, number>();
  const checkAwaitedNamespaces = async (): Promise<void> => {
    for (const [name, since] of awaited) {
      if (clock.now() - since >= periods.slowMs) awaited.delete(name);
    }
    if (awaited.size === 0) return;
    try {
      const appeared = (await port.listNamespaces()).some((ns) => awaited.has(ns.name));
      callSucceeded();
      if (appeared) requestListing();
    } catch (error) {
      opts.metrics?.readError?.('listNamespaces');
      log.debug('listing cloud map namespaces failed', { [logFields.error]: describe(error) });
    }
  };

  const fastRound = async (): Promise<boolean> => {
    if (unreachable && !(await probe())) return false;
    await checkAwaitedNamespaces();
    const list = [...services.values()];
    let succeeded = 0;
    let failed = 0;
    await inPool(list, concurrency, async (s) => {
      let revision: number;
      try {
        revision = await port.discoverInstancesRevision(s.namespace, s.name);
        callSucceeded();
      } catch (error) {
        failed++;
        markError(s, 'discoverInstancesRevision', error);
        return;
      }
      // Dropped by a slow round meanwhile: not a failure (issue 12: a round whose services
      // were all dropped used to count as one and reported Cloud Map unreachable).
      const current = services.get(keyOf(s.namespace, s.name));
      if (current === undefined) return;
      if (current.revision === revision && current.error === undefined) {
        services.set(keyOf(s.namespace, s.name), { ...current, confirmedAtMs: now() });
        succeeded++;
        return;
      }
      if (await fetchInstances(current)) succeeded++;
      else failed++;
    });
    return failed === 0 || succeeded > 0;
  };

  const resyncRound = async (): Promise<boolean> => {
    let ok = true;
    await inPool([...services.values()], concurrency, async (s) => {
      if (!(await fetchInstances(s))) ok = false;
    });
    return ok;
  };

  // One round of a kind at a time: a refresh asked for during a slow round waits for it.
  const running: Partial<Record<RoundKind, Promise<void>>> = {};
  const run = async (kind: RoundKind): Promise<void> => {
    while (running[kind] !== undefined) await running[kind];
    const round = runOnce(kind);
    running[kind] = round;
    try {
      await round;
    } finally {
      delete running[kind];
    }
  };

  const runOnce = async (kind: RoundKind): Promise<void> => {
    const started = clock.now();
    const successesBefore = successes;
    const ok = await (kind === 'slow'
      ? slowRound()
      : kind === 'fast'
        ? fastRound()
        : resyncRound());
    failures[kind] = ok ? 0 : failures[kind] + 1;
    // A failed round in which no call succeeded: Cloud Map cannot be reached from here.
    if (!ok && successes === successesBefore) unreachable = true;
    if (ok && kind !== 'fast') {
      lastGoodMs = now();
      const allRead = [...services.values()].every((s) => s.fetchedAtMs !== undefined);
      if (!synced && kind === 'slow' && allRead) {
        synced = true;
        log.info('cloud map snapshot synced', { services: services.size });
      }
    }
    opts.metrics?.round?.(kind, ok, clock.now() - started);
    reportHealth();
  };

  const schedule = (kind: RoundKind, delayMs: number): void => {
    if (stopped) return;
    timers[kind] = clock.setTimer(() => {
      delete timers[kind];
      const round = run(kind).finally(() => {
        inFlight.delete(round);
        schedule(kind, nextDelay(kind));
      });
      inFlight.add(round);
    }, delayMs);
  };

  const nextDelay = (kind: RoundKind): number => {
    const base =
      kind === 'slow'
        ? periods.slowMs
        : kind === 'fast'
          ? fastPeriodFor(periods, services.size, opts.requestBudgetPerSecond)
          : periods.resyncMs;
    // Until the first complete snapshot, retry the slow round at the fast period.
    const first = kind === 'slow' && !synced ? Math.min(base, periods.fastMs) : base;
    // While unreachable the fast round is a single probe call: keep it at the fast period so
    // recovery is seen within one period, instead of backing off to maxBackoffMs.
    const failed = kind === 'fast' && unreachable ? 0 : failures[kind];
    return withJitter(backoff(first, failed, periods.maxBackoffMs), periods.jitter, random());
  };

  /** A Kubernetes Service's snapshot: its base service merged with its shards. */
  const view = (s: ServiceSnapshot): ServiceSnapshot =>
    mergedSnapshot(s, opts.clustersetId, (name) => services.get(keyOf(s.namespace, name)));
  const isImport = (s: ServiceSnapshot): boolean =>
    s.name !== HEARTBEAT_SERVICE_NAME && !isShardServiceName(s.name);

  return {
    get synced() {
      return synced;
    },
    get tracked() {
      return services.size;
    },
    get(namespace, name) {
      if (name === HEARTBEAT_SERVICE_NAME || isShardServiceName(name)) return undefined;
      const s = services.get(keyOf(namespace, name));
      return s === undefined ? undefined : view(s);
    },
    services(namespace) {
      return [...services.values()]
        .filter((s) => s.namespace === namespace && isImport(s))
        .map(view);
    },
    allServices() {
      return [...services.values()].filter(isImport).map(view);
    },
    heartbeats(namespace): readonly CloudMapInstance[] {
      return services.get(keyOf(namespace, HEARTBEAT_SERVICE_NAME))?.instances ?? [];
    },
    heartbeatService(namespace) {
      return services.get(keyOf(namespace, HEARTBEAT_SERVICE_NAME));
    },
    health,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule('slow', 0);
      schedule('fast', withJitter(periods.fastMs, periods.jitter, random()));
      schedule('resync', withJitter(periods.resyncMs, periods.jitter, random()));
    },
    async stop() {
      stopped = true;
      for (const kind of ['slow', 'fast', 'resync'] as const) {
        const t = timers[kind];
        if (t !== undefined) clock.clearTimer(t);
        delete timers[kind];
      }
      await Promise.all([...inFlight]);
    },
    async refreshNow() {
      await run('slow');
    },
    awaitNamespace(namespace) {
      if (opts.isLocalNamespace(namespace)) awaited.set(namespace, clock.now());
    },
  };
}
