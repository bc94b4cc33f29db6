import {
  Attr,
  encodeHeartbeat,
  exportsDigest,
  HEARTBEAT_SERVICE_NAME,
  heartbeatDue,
  heartbeatInstanceId,
  isCloudMapError,
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
}

export interface Heartbeats {
  /**
   * Renews the heartbeat in each namespace where it is due (by age, or because the set of
   * exported service names changed) and removes it from namespaces this process exported into
   * before but no longer does. Errors are per namespace and logged.
   */
  sync(exports: ReadonlyMap<string, readonly string[]>, opts?: { settled: boolean }): Promise<void>;
}

/**
 * The per-cluster heartbeat (docs/cloudmap-schema.md): one instance per namespace in the
 * `_mcs-heartbeat` service. Renewal is skipped while the stored heartbeat is younger than a
 * period, so a restart inside a period writes nothing.
 */
export function createHeartbeats(deps: HeartbeatDeps): Heartbeats {
  const { cloudMap, resolver, pending, logger } = deps;
  const known = new Set<string>();
  // What this process last wrote per namespace: renewals decide from it, so an idle agent reads
  // its heartbeat once (after a start or a failure), not every third of a period.
  const written = new Map<string, CloudMapInstance>();

  async function renew(
    namespace: string,
    names: readonly string[],
    cluster: ClusterIdentity,
    settled: boolean,
  ): Promise<void> {
    const ensured = await resolver.ensure(namespace, HEARTBEAT_SERVICE_NAME);
    if (ensured.state !== 'ready') return;
    const { target } = ensured;
    const id = heartbeatInstanceId(cluster);
    let observed = written.get(namespace);
    if (observed === undefined) observed = await read(namespace, target.serviceId, cluster, id);
    const now = deps.now();
    const digest = exportsDigest(names);
    // A digest of a partial set (before the first pass over every export) renews nothing.
    if (!heartbeatDue(observed, now, deps.periodMs, settled ? digest : undefined)) {
      if (observed !== undefined) written.set(namespace, observed);
      return;
    }
    const instance = encodeHeartbeat({
      cluster,
      renewedAtMs: now,
      periodSeconds: Math.round(deps.periodMs / 1000),
      exportsDigest: digest,
    });
    written.delete(namespace);
    const ref = await cloudMap.registerInstance(target.serviceId, instance.id, instance.attributes);
    pending.add(target.serviceId, instance.id, ref.operationId, instance.attributes);
    written.set(namespace, instance);
  }

  async function read(
    namespace: string,
    serviceId: string,
    cluster: ClusterIdentity,
    id: string,
  ): Promise<CloudMapInstance | undefined> {
    try {
      const found = await cloudMap.discoverInstances(namespace, HEARTBEAT_SERVICE_NAME, {
        [Attr.ClustersetId]: cluster.clustersetId,
        [Attr.ClusterId]: cluster.clusterId,
      });
      return pending.overlay(serviceId, found.instances).find((i) => i.id === id);
    } catch (error) {
      if (!isCloudMapError(error, 'ServiceNotFound')) throw error;
      return undefined;
    }
  }

  async function remove(namespace: string, cluster: ClusterIdentity): Promise<void> {
    written.delete(namespace);
    const target = await resolver.find(namespace, HEARTBEAT_SERVICE_NAME);
    if (target === undefined) return;
    try {
      await cloudMap.deregisterInstance(target.serviceId, heartbeatInstanceId(cluster));
    } catch (error) {
      if (!isCloudMapError(error, 'InstanceNotFound')) throw error;
    }
  }

  return {
    async sync(exports, opts = { settled: true }) {
      const cluster = deps.identity();
      if (cluster === undefined) return;
      const work: [string, () => Promise<void>][] = [];
      for (const [ns, names] of exports)
        work.push([ns, () => renew(ns, names, cluster, opts.settled)]);
      for (const ns of known) {
        if (!exports.has(ns)) work.push([ns, () => remove(ns, cluster)]);
      }
      for (const [ns, fn] of work) {
        try {
          await fn();
          if (exports.has(ns)) known.add(ns);
          else known.delete(ns);
        } catch (error) {
          written.delete(ns); // read it again next time: the write may or may not have happened
          logger.warn('heartbeat failed', { namespace: ns, err: error });
        }
      }
    },
  };
}
