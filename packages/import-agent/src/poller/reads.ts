import {
  decodeHeartbeats,
  HEARTBEAT_SERVICE_NAME,
  isCloudMapNotFound,
  sightRenewals,
} from '@cloudmap-mcs/core';
import { normalized, queryFor, referencedShards } from './shards.js';
import { sameInstances, type ServiceSnapshot } from './snapshot.js';
import { firstSeen, keyOf, track, type PollerState } from './state.js';

/**
 * The poller's reads of one service: DiscoverInstances (with its shards, ADR 0015) and
 * DiscoverInstancesRevision. A failed read keeps the last good state and marks the service
 * failing; every success stamps `confirmedAtMs` (the data is known good as of then).
 */
export interface ServiceReads {
  /** DiscoverInstances of `s` (and its shards); true when every read succeeded. */
  fetch(s: ServiceSnapshot): Promise<boolean>;
  /** The revision of `s`, and a fetch when it moved (or `s` is failing); true on success. */
  check(s: ServiceSnapshot): Promise<boolean>;
  /**
   * A service the change feed named (or a heartbeat service looked for): read now, tracked
   * first if it is new (with its namespace's heartbeat service), forgotten again if it does
   * not exist.
   */
  readNamed(namespace: string, name: string): Promise<boolean>;
  /** Wall-clock time of the last successful read or revision check of a tracked service. */
  checkedAt(key: string): number | undefined;
}

/** The reads' own state: the poller's, and when each tracked service was last checked. */
interface ReadContext {
  readonly state: PollerState;
  readonly checked: Map<string, number>;
}

export function createServiceReads(state: PollerState): ServiceReads {
  const ctx: ReadContext = { state, checked: new Map() };
  return {
    fetch: (s) => fetch(ctx, s),
    check: (s) => check(ctx, s),
    checkedAt: (key) => ctx.checked.get(key),
    readNamed: (namespace, name) => readNamed(ctx, namespace, name),
  };
}

function stamp(ctx: ReadContext, s: ServiceSnapshot): void {
  ctx.checked.set(keyOf(s.namespace, s.name), ctx.state.clock.now());
}

/**
 * Whether a successful read ends a blind period of `before`: its last read failed, or it was
 * last confirmed before the latest outage ended (not read at all while the poller only
 * probed). Then its `resumedAtMs` moves to the read's time, and liveness gives the heartbeats
 * it holds one TTL to catch up (issue 11 item 1).
 */
function endsBlindPeriod(state: PollerState, before: ServiceSnapshot): boolean {
  const ended = state.outageEndedAtMs;
  const missedOutage =
    ended !== undefined && before.confirmedAtMs !== undefined && before.confirmedAtMs < ended;
  return before.error !== undefined || missedOutage;
}

/**
 * DiscoverInstances for one service; 'missing' when Cloud Map has no such service. While
 * Cloud Map cannot be reached a read is not attempted (nor a check): each would only wait
 * out its deadline and hold its round. The fast round's probe finds out when Cloud Map is
 * back, and a service not read meanwhile counts as blind until read (`endsBlindPeriod`).
 */
async function read(ctx: ReadContext, s: ServiceSnapshot): Promise<'ok' | 'failed' | 'missing'> {
  const { state } = ctx;
  if (state.unreachable) return 'failed';
  const { port, clock, services } = state;
  const key = keyOf(s.namespace, s.name);
  try {
    const result = await port.discoverInstances(
      s.namespace,
      s.name,
      queryFor(s.name, state.opts.clustersetId),
    );
    const instances = normalized(s.name, result.instances);
    state.callSucceeded();
    const changed = !sameInstances(s.instances, instances);
    state.log.debug('cloud map service read', {
      service: key,
      revision: result.revision,
      instances: instances.length,
      changed,
    });
    const readAt = state.now();
    const next: ServiceSnapshot = {
      ...s,
      instances,
      revision: result.revision,
      fetchedAtMs: clock.now(),
      confirmedAtMs: readAt,
      clustersFirstSeenMs: firstSeen(s.clustersFirstSeenMs, instances, readAt),
    };
    const before = services.get(key) ?? s;
    const resumed = endsBlindPeriod(state, before) ? readAt : before.resumedAtMs;
    if (resumed !== undefined) next.resumedAtMs = resumed;
    if (s.name === HEARTBEAT_SERVICE_NAME) {
      const { clustersetId } = state.opts;
      const { heartbeats } = decodeHeartbeats(instances, { clustersetId });
      next.renewalsSeen = sightRenewals(before.renewalsSeen, heartbeats, readAt);
    }
    delete next.error;
    services.set(key, next);
    stamp(ctx, next);
    if (s.name === HEARTBEAT_SERVICE_NAME) state.onHeartbeats(s.namespace, instances);
    // Its shards first, so the change is handled with them current.
    const ok = await readShards(ctx, next);
    if (changed) state.notify(next);
    return ok ? 'ok' : 'failed';
  } catch (error) {
    if (isCloudMapNotFound(error) && s.fetchedAtMs === undefined) {
      // Never read and not there: a name the feed gave that Cloud Map does not have.
      state.callSucceeded();
      return 'missing';
    }
    state.markError(s, 'discoverInstances', error);
    return 'failed';
  }
}

async function fetch(ctx: ReadContext, s: ServiceSnapshot): Promise<boolean> {
  return (await read(ctx, s)) !== 'failed';
}

/** One revision check; the fetch follows when it moved. */
async function check(ctx: ReadContext, s: ServiceSnapshot): Promise<boolean> {
  const { state } = ctx;
  const { services } = state;
  const key = keyOf(s.namespace, s.name);
  if (state.unreachable) return false;
  let revision: number;
  try {
    revision = await state.port.discoverInstancesRevision(s.namespace, s.name);
    state.callSucceeded();
  } catch (error) {
    state.markError(s, 'discoverInstancesRevision', error);
    return false;
  }
  // Dropped by a slow round meanwhile: not a failure (issue 12).
  const current = services.get(key);
  if (current === undefined) return true;
  if (current.revision === revision && current.error === undefined) {
    const readAt = state.now();
    services.set(key, {
      ...current,
      confirmedAtMs: readAt,
      ...(endsBlindPeriod(state, current) ? { resumedAtMs: readAt } : {}),
    });
    stamp(ctx, current);
    return true;
  }
  return fetch(ctx, current);
}

/**
 * Reading S reads its shards (ADR 0015): a shard its export records name is read at once
 * when new, and when its revision moved otherwise, so a change inside a shard is seen even by
 * a reader told only "S changed" (the change feed names Kubernetes Services).
 */
async function readShards(ctx: ReadContext, base: ServiceSnapshot): Promise<boolean> {
  const { services } = ctx.state;
  let ok = true;
  for (const name of referencedShards(base, ctx.state.opts.clustersetId)) {
    const key = keyOf(base.namespace, name);
    const shard = services.get(key);
    if (shard === undefined) {
      if (!(await fetch(ctx, track(ctx.state, base.namespace, name)))) ok = false;
    } else if (shard.revision !== undefined && shard.error === undefined) {
      if (!(await check(ctx, shard))) ok = false;
    } else if (!(await fetch(ctx, shard))) ok = false;
  }
  return ok;
}

async function readNamed(ctx: ReadContext, namespace: string, name: string): Promise<boolean> {
  const { services } = ctx.state;
  const key = keyOf(namespace, name);
  const known = services.get(key);
  if (known !== undefined) return fetch(ctx, known);
  // A new service: its namespace's heartbeats matter to its import (liveness) as well.
  const hbKey = keyOf(namespace, HEARTBEAT_SERVICE_NAME);
  if (name !== HEARTBEAT_SERVICE_NAME && !services.has(hbKey)) {
    const hb = track(ctx.state, namespace, HEARTBEAT_SERVICE_NAME);
    if ((await read(ctx, hb)) === 'missing') services.delete(hbKey);
  }
  const outcome = await read(ctx, track(ctx.state, namespace, name));
  if (outcome === 'missing') {
    services.delete(key);
    ctx.checked.delete(key);
  }
  return outcome !== 'failed';
}
