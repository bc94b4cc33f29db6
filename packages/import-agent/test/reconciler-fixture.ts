import {
  createAddressPolicy,
  encodeClusterExport,
  noopLogger,
  type CloudMapInstance,
  type ClusterExport,
  type Logger,
} from '@cloudmap-mcs/core';
import type { CloudMapSnapshot } from '../src/poller/snapshot.js';
import { createRecentWrites } from '../src/reconcile/recent-writes.js';
import { createImportReconciler, type ImportReconcilerDeps } from '../src/reconcile/reconciler.js';
import { CLUSTERSET } from './cloudmap-fixtures.js';
import type { FakeCluster } from './fake-cluster.js';
import { FakeClock } from '@cloudmap-mcs/core/testing';

/**
 * A Cloud Map snapshot that holds exactly the exports put in it (no poller), for driving the
 * reconciler one key at a time. `set` replaces the records of a service; `[]` removes them.
 */
export interface StaticSnapshot extends CloudMapSnapshot {
  set(namespace: string, name: string, exports: ClusterExport[]): void;
}

export function staticSnapshot(): StaticSnapshot {
  const services = new Map<
    string,
    { namespace: string; name: string; instances: CloudMapInstance[] }
  >();
  const all = () => [...services.values()];
  return {
    synced: true,
    set(namespace, name, exports) {
      const key = `${namespace}/${name}`;
      if (exports.length === 0) services.delete(key);
      else
        services.set(key, {
          namespace,
          name,
          instances: exports.flatMap((e) => encodeClusterExport(e).instances),
        });
    },
    get: (ns, name) => services.get(`${ns}/${name}`),
    services: (ns) => all().filter((s) => s.namespace === ns),
    allServices: all,
    heartbeatService: () => undefined,
    health: () => ({ reachable: true, message: 'ok', failingServices: 0 }),
  };
}

/** The import reconciler over a fake cluster and a static snapshot, with no write overlay. */
export function reconcilerFor(
  cluster: FakeCluster,
  snapshot: CloudMapSnapshot,
  over: Partial<ImportReconcilerDeps> & { logger?: Logger } = {},
) {
  const clock = new FakeClock(1_000);
  return createImportReconciler({
    sources: cluster,
    writer: cluster,
    snapshot,
    trust: { clustersetId: CLUSTERSET, addresses: createAddressPolicy([]) },
    heartbeatTtlMs: 60_000,
    now: () => 1_000_000,
    logger: noopLogger,
    clock,
    recent: createRecentWrites(clock, 0),
    ...over,
  });
}
