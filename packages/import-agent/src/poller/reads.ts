import { HEARTBEAT_SERVICE_NAME, isCloudMapError } from '@cloudmap-mcs/core';
import { normalized, queryFor, referencedShards } from './shards.js';
import { sameInstances, type ServiceSnapshot } from './snapshot.js';
import { firstSeen, keyOf, type PollerState } from './state.js';

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
   * A service the change feed named: read now, tracked first if it is new (with its
   * namespace's heartbeat service), forgotten again if it does not exist.
   */
  readNamed(namespace: string, name: string): Promise<boolean>;
  /** Wall-clock time of the last successful read or revision check of a tracked service. */
  checkedAt(key: string): number | undefined;
}

const notFound = (error: unknown): boolean =>
  isCloudMapError(error, 'ServiceNotFound') || isCloudMapError(error, 'NamespaceNotFound');

export function createServiceReads(state: PollerState): ServiceReads {
  const { port, clock, services } = state;
  const { clustersetId } = state.opts;
  const checked = new Map<string, number>();

  const stamp = (s: ServiceSnapshot): void =>
    void checked.set(keyOf(s.namespace, s.name), clock.now());

  /**
   * This successful read ends a blind period of `before`: its last read failed, or it was last
   * confirmed before the latest outage ended (not read at all while the poller only probed).
   * Then its `resumedAtMs` moves to `readAt`, and liveness gives the heartbeats it holds one
   * TTL to catch up (issue 11 item 1).
   */
  const blindUntil = (before: ServiceSnapshot, readAt: number): number | undefined => {
    const ended = state.outageEndedAtMs;
    const missedOutage =
      ended !== undefined && before.confirmedAtMs !== undefined && before.confirmedAtMs < ended;
    return before.error !== undefined || missedOutage ? readAt : before.resumedAtMs;
  };
  const withResumed = (next: ServiceSnapshot, resumedAtMs: number | undefined): ServiceSnapshot =>
    resumedAtMs === undefined ? next : { ...next, resumedAtMs };

  /** DiscoverInstances for one service; 'missing' when Cloud Map has no such service. */
  const read = async (s: ServiceSnapshot): Promise<'ok' | 'failed' | 'missing'> => {
    const key = keyOf(s.namespace, s.name);
    try {
      const result = await port.discoverInstances(
        s.namespace,
        s.name,
        queryFor(s.name, clustersetId),
      );
      const instances = normalized(s.name, result.instances);
      state.callSucceeded();
      const changed = !sameInstances(s.instances, instances);
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
      const resumed = blindUntil(before, readAt);
      if (resumed !== undefined) next.resumedAtMs = resumed;
      delete next.error;
      services.set(key, next);
      stamp(next);
      // Its shards first, so the change is handled with them current.
      const ok = await readShards(next);
      if (changed) state.notify(next);
      return ok ? 'ok' : 'failed';
    } catch (error) {
      if (notFound(error) && s.fetchedAtMs === undefined) {
        // Never read and not there: a name the feed gave that Cloud Map does not have.
        state.callSucceeded();
        return 'missing';
      }
      state.markError(s, 'discoverInstances', error);
      return 'failed';
    }
  };

  const fetch = async (s: ServiceSnapshot): Promise<boolean> => (await read(s)) !== 'failed';

  /** One revision check; the fetch follows when it moved. */
  const check = async (s: ServiceSnapshot): Promise<boolean> => {
    const key = keyOf(s.namespace, s.name);
    let revision: number;
    try {
      revision = await port.discoverInstancesRevision(s.namespace, s.name);
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
      services.set(
        key,
        withResumed({ ...current, confirmedAtMs: readAt }, blindUntil(current, readAt)),
      );
      stamp(current);
      return true;
    }
    return fetch(current);
  };

  /**
   * Reading S reads its shards (ADR 0015): a shard its export records name is read at once
   * when new, and when its revision moved otherwise, so a change inside a shard is seen even by
   * a reader told only "S changed" (the change feed names Kubernetes Services).
   */
  const readShards = async (base: ServiceSnapshot): Promise<boolean> => {
    let ok = true;
    for (const name of referencedShards(base, clustersetId)) {
      const key = keyOf(base.namespace, name);
      const shard = services.get(key);
      if (shard === undefined) {
        const fresh = { namespace: base.namespace, name, instances: [] };
        services.set(key, fresh);
        if (!(await fetch(fresh))) ok = false;
      } else if (shard.revision !== undefined && shard.error === undefined) {
        if (!(await check(shard))) ok = false;
      } else if (!(await fetch(shard))) ok = false;
    }
    return ok;
  };

  const track = (namespace: string, name: string): ServiceSnapshot => {
    const fresh: ServiceSnapshot = { namespace, name, instances: [] };
    services.set(keyOf(namespace, name), fresh);
    return fresh;
  };

  return {
    fetch,
    check,
    checkedAt: (key) => checked.get(key),
    async readNamed(namespace, name) {
      const key = keyOf(namespace, name);
      const known = services.get(key);
      if (known !== undefined) return fetch(known);
      // A new service: its namespace's heartbeats matter to its import (liveness) as well.
      const hbKey = keyOf(namespace, HEARTBEAT_SERVICE_NAME);
      if (!services.has(hbKey)) {
        const hb = track(namespace, HEARTBEAT_SERVICE_NAME);
        if ((await read(hb)) === 'missing') services.delete(hbKey);
      }
      const outcome = await read(track(namespace, name));
      if (outcome === 'missing') {
        services.delete(key);
        checked.delete(key);
      }
      return outcome !== 'failed';
    },
  };
}
