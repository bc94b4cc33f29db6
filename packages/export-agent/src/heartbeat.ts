import {
  Attr,
  encodeHeartbeat,
  exportsDigest,
  HEARTBEAT_SERVICE_NAME,
  heartbeatDue,
  heartbeatInstanceId,
  isCloudMapError,
  isCloudMapNotFound,
  type CloudMapInstance,
  type CloudMapPort,
  type ClusterIdentity,
  type Logger,
} from '@cloudmap-mcs/core';
import type { TargetResolver } from './cloudmap-target.js';
import type { PendingWrites } from './pending-writes.js';

export interface HeartbeatDeps {
  cloudMap: CloudMapPort;
  resolver: TargetResolver;
  pending: PendingWrites;
  identity: () => ClusterIdentity | undefined;
  now: () => number;
  periodMs: number;
  logger: Logger;
  /**
   * The change feed this process writes (its last successful record), stated in each
   * heartbeat: readers trust this cluster's feed record only while they agree (ADR 0018).
   * Absent or undefined: the heartbeat states no feed, and readers check this cluster's
   * services one by one.
   */
  feed?: () => { epoch: string; seq: number } | undefined;
  /**
   * The feed writer has not yet tried its first write: what the heartbeat states is left as
   * it is until then (about a second), so a restart renews the heartbeat once, for the new
   * epoch, not first for "no feed" and then again.
   */
  feedStarting?: () => boolean;
  /** A namespace's heartbeat was written (success), or could not be checked or written. */
  onRenewal?: ((result: 'success' | 'failure') => void) | undefined;
  /**
   * After each sync: the wall time (ms) the oldest heartbeat this process keeps was renewed
   * at, as written or read back; the sync's own time when it keeps none (nothing exported).
   * A namespace whose heartbeat was never known current counts from its first failure.
   */
  onCurrent?: ((renewedAtMs: number) => void) | undefined;
}

export interface Heartbeats {
  /**
   * Renews the heartbeat in each namespace where it is due (by age, or because the set of
   * exported service names changed) and removes it from namespaces this process exported into
   * before but no longer does. Errors are per namespace and logged.
   */
  sync(exports: ReadonlyMap<string, readonly string[]>, opts?: { settled: boolean }): Promise<void>;
  /**
   * Whether a renewal waited for this process's previous write of the same heartbeat to
   * finish (Cloud Map refuses a second write of an instance while one is in progress); reading
   * it clears it. The controller syncs again when an operation completes.
   */
  takeDeferred(): boolean;
}

/**
 * The per-cluster heartbeat (docs/cloudmap-schema.md): one instance per namespace in the
 * `_mcs-heartbeat` service. Renewal is skipped while the stored heartbeat is younger than a
 * period, so a restart inside a period writes nothing.
 */
export function createHeartbeats(deps: HeartbeatDeps): Heartbeats {
  const h: HeartbeatState = {
    deps,
    known: new Set(),
    written: new Map(),
    renewedAt: new Map(),
    deferred: false,
  };
  return {
    sync: (exports, opts = { settled: true }) => sync(h, exports, opts.settled),
    takeDeferred: () => {
      const was = h.deferred;
      h.deferred = false;
      return was;
    },
  };
}

interface HeartbeatState {
  readonly deps: HeartbeatDeps;
  /** Namespaces this process has a heartbeat in. */
  readonly known: Set<string>;
  /**
   * What this process last wrote per namespace: renewals decide from it, so an idle agent
   * reads its heartbeat once (after a start or a failure), not every third of a period.
   */
  readonly written: Map<string, CloudMapInstance>;
  /** When each namespace's heartbeat was last known renewed (wall ms): the age metric. */
  readonly renewedAt: Map<string, number>;
  /** A renewal waited for a write of the same heartbeat still in progress. */
  deferred: boolean;
}

async function sync(
  h: HeartbeatState,
  exports: ReadonlyMap<string, readonly string[]>,
  settled: boolean,
): Promise<void> {
  const { known, written, renewedAt } = h;
  const cluster = h.deps.identity();
  if (cluster === undefined) return;
  // Renewals first, then removals from namespaces no longer exported into.
  for (const ns of new Set([...exports.keys(), ...known])) {
    const names = exports.get(ns);
    try {
      await (names === undefined ? remove(h, ns, cluster) : renew(h, ns, names, cluster, settled));
      if (names === undefined) known.delete(ns);
      else known.add(ns);
    } catch (error) {
      written.delete(ns); // read it again next time: the write may or may not have happened
      if (exports.has(ns)) {
        h.deps.onRenewal?.('failure');
        if (!renewedAt.has(ns)) renewedAt.set(ns, h.deps.now());
      }
      // The heartbeat service deleted outside the agent: look it up (or create it) again.
      if (isCloudMapNotFound(error)) h.deps.resolver.forget(ns, HEARTBEAT_SERVICE_NAME);
      h.deps.logger.warn('heartbeat failed', { namespace: ns, err: error });
    }
  }
  reportCurrent(h, exports);
}

/**
 * The heartbeat age the alert watches (docs/export-agent.md#metrics-metrics): how old the oldest
 * heartbeat of an exported namespace is. It grows only while a renewal fails (or the
 * agent stops syncing); an idle healthy agent rewrites each heartbeat every period.
 */
function reportCurrent(h: HeartbeatState, exports: ReadonlyMap<string, readonly string[]>): void {
  for (const ns of h.renewedAt.keys()) if (!exports.has(ns)) h.renewedAt.delete(ns);
  const times = [...h.renewedAt.values()];
  h.deps.onCurrent?.(times.length === 0 ? h.deps.now() : Math.min(...times));
}

async function renew(
  h: HeartbeatState,
  namespace: string,
  names: readonly string[],
  cluster: ClusterIdentity,
  settled: boolean,
): Promise<void> {
  const { deps, written } = h;
  const ensured = await deps.resolver.ensure(namespace, HEARTBEAT_SERVICE_NAME);
  if (ensured.state !== 'ready') return;
  const { target } = ensured;
  const id = heartbeatInstanceId(cluster);
  let observed = written.get(namespace);
  if (observed === undefined) observed = await read(h, namespace, target.serviceId, cluster, id);
  const now = deps.now();
  const digest = exportsDigest(names);
  const feed = deps.feed?.();
  const statedEpoch = observed?.attributes[Attr.FeedEpoch];
  // A digest of a partial set (before the first pass over every export) renews nothing. A
  // feed other than the one the stored heartbeat states is stated at once: a new epoch (this
  // process started), so readers need not check this cluster's services one by one until the
  // next renewal, and no feed (turned off, or not written yet by this process), so readers
  // stop trusting a record nobody writes any more now, not a period later.
  if (
    !heartbeatDue(observed, now, deps.periodMs, settled ? digest : undefined) &&
    (statedEpoch === feed?.epoch || deps.feedStarting?.() === true)
  ) {
    if (observed !== undefined) {
      written.set(namespace, observed);
      // Not due: younger than a period, so its time is a finite number.
      h.renewedAt.set(namespace, Number(observed.attributes[Attr.HeartbeatRenewedAt]));
    }
    return;
  }
  // A renewal right after another (a restart's first beat, then the one its new feed epoch
  // asks for) would be refused with DuplicateRequest while the first is in progress, and the
  // new epoch stated only a tick later: wait for it to finish instead.
  if (deps.pending.has(target.serviceId, id)) {
    h.deferred = true;
    return;
  }
  const instance = encodeHeartbeat({
    cluster,
    renewedAtMs: now,
    periodSeconds: Math.round(deps.periodMs / 1000),
    exportsDigest: digest,
    ...(feed === undefined ? {} : { feed }),
  });
  written.delete(namespace);
  let ref;
  try {
    ref = await deps.cloudMap.registerInstance(target.serviceId, instance.id, instance.attributes);
  } catch (error) {
    // A write of this heartbeat that this process did not submit is in progress (its previous
    // run's, just before a restart): wait for it as for our own, quietly; the next sync reads
    // the heartbeat again and renews it if still due.
    if (!isCloudMapError(error, 'DuplicateRequest')) throw error;
    h.deferred = true;
    return;
  }
  deps.pending.add(target.serviceId, instance.id, ref.operationId, instance.attributes);
  written.set(namespace, instance);
  h.renewedAt.set(namespace, now);
  deps.onRenewal?.('success');
}

async function read(
  h: HeartbeatState,
  namespace: string,
  serviceId: string,
  cluster: ClusterIdentity,
  id: string,
): Promise<CloudMapInstance | undefined> {
  try {
    const found = await h.deps.cloudMap.discoverInstances(namespace, HEARTBEAT_SERVICE_NAME, {
      [Attr.ClustersetId]: cluster.clustersetId,
      [Attr.ClusterId]: cluster.clusterId,
    });
    return h.deps.pending.overlay(serviceId, found.instances).find((i) => i.id === id);
  } catch (error) {
    if (!isCloudMapError(error, 'ServiceNotFound')) throw error;
    return undefined;
  }
}

async function remove(h: HeartbeatState, namespace: string, cluster: ClusterIdentity) {
  h.written.delete(namespace);
  const target = await h.deps.resolver.find(namespace, HEARTBEAT_SERVICE_NAME);
  if (target === undefined) return;
  try {
    await h.deps.cloudMap.deregisterInstance(target.serviceId, heartbeatInstanceId(cluster));
  } catch (error) {
    if (!isCloudMapError(error, 'InstanceNotFound')) throw error;
  }
}
