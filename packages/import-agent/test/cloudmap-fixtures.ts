import {
  HEARTBEAT_SERVICE_NAME,
  encodeClusterExport,
  encodeHeartbeat,
  type ClusterExport,
  type Endpoint,
  type ServiceProperties,
} from '@cloudmap-mcs/core';
import type { FakeCloudMap, FakeClock } from '@cloudmap-mcs/core/testing';

export const CLUSTERSET = 'set-1';

export function props(over: Partial<ServiceProperties> = {}): ServiceProperties {
  return {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    exportedLabels: {},
    exportedAnnotations: {},
    exportCreatedAtMs: 1_000,
    ...over,
  };
}

export function endpoints(n: number, octet: number): Endpoint[] {
  return Array.from({ length: n }, (_, i) => ({
    address: `10.${String(octet)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`,
    addressType: 'IPv4' as const,
    ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
    conditions: { ready: true, serving: true, terminating: false },
  }));
}

export function exportOf(
  clusterId: string,
  namespace: string,
  name: string,
  eps: Endpoint[],
  over: Partial<ServiceProperties> = {},
  clustersetId = CLUSTERSET,
): ClusterExport {
  return {
    namespace,
    name,
    cluster: { clusterId, clustersetId },
    properties: props(over),
    endpoints: eps,
    hasExportRecord: true,
  };
}

/** Writes one cluster's records the way an export agent would (replacing its old ones). */
export async function publish(cm: FakeCloudMap, exp: ClusterExport): Promise<void> {
  const ns = cm.namespaceByName(exp.namespace) ?? cm.seedNamespace(exp.namespace, 'HTTP');
  const svc = cm.serviceByName(exp.namespace, exp.name) ?? cm.seedService(ns.name, exp.name);
  const { instances } = encodeClusterExport(exp);
  const keep = new Set(instances.map((i) => i.id));
  for (const old of cm.instancesOf(exp.namespace, exp.name)) {
    if (old.attributes['CLUSTER_ID'] === exp.cluster.clusterId && !keep.has(old.id)) {
      await cm.deregisterInstance(svc.id, old.id);
    }
  }
  for (const i of instances) await cm.registerInstance(svc.id, i.id, i.attributes);
}

/** Removes every record of a cluster from a service (unexport). */
export async function unpublish(
  cm: FakeCloudMap,
  namespace: string,
  name: string,
  clusterId: string,
): Promise<void> {
  const svc = cm.serviceByName(namespace, name);
  if (svc === undefined) return;
  for (const old of cm.instancesOf(namespace, name)) {
    if (old.attributes['CLUSTER_ID'] === clusterId) await cm.deregisterInstance(svc.id, old.id);
  }
}

/**
 * Renews `clusterId`'s heartbeat in `namespace`; `feed` is what it states about its change
 * feed (the epoch and last written sequence number: what vouches for its feed record).
 */
export async function heartbeat(
  cm: FakeCloudMap,
  namespace: string,
  clusterId: string,
  renewedAtMs: number,
  exportsDigest?: string,
  feed?: { epoch: string; seq: number },
): Promise<void> {
  const ns = cm.namespaceByName(namespace) ?? cm.seedNamespace(namespace, 'HTTP');
  const svc =
    cm.serviceByName(namespace, HEARTBEAT_SERVICE_NAME) ??
    cm.seedService(ns.name, HEARTBEAT_SERVICE_NAME);
  const hb = encodeHeartbeat({
    cluster: { clusterId, clustersetId: CLUSTERSET },
    renewedAtMs,
    periodSeconds: 30,
    ...(exportsDigest === undefined ? {} : { exportsDigest }),
    ...(feed === undefined ? {} : { feed }),
  });
  await cm.registerInstance(svc.id, hb.id, hb.attributes);
}

/** Lets pending promise chains run (the poller awaits the fake between timers). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Advances `clock` by `ms` in steps of `stepMs`, settling `settles` rounds of promises after
 * each step: poller rounds are async, so a round finishes and schedules the next before it
 * falls due.
 */
export function clockTicker(
  clock: FakeClock,
  stepMs: number,
  settles: number,
): (ms: number) => Promise<void> {
  return async (ms) => {
    clock.advance(0);
    await settle();
    for (let left = ms; left > 0; left -= Math.min(left, stepMs)) {
      clock.advance(Math.min(left, stepMs));
      await settle(settles);
    }
    await settle();
  };
}
