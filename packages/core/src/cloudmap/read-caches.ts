import type { CloudMapPort } from '../ports/cloudmap-port.js';
import type { Clock } from '../workqueue/clock.js';
import { createReadCache } from './cache.js';
import type { CloudMapMetrics } from './metrics.js';

/** How long read results are reused; 0 disables a cache. Writes evict regardless. */
export interface CacheTtls {
  namespaces: number;
  services: number;
  instances: number;
  discover: number;
}

export const defaultCacheTtls: CacheTtls = {
  namespaces: 60_000,
  services: 30_000,
  instances: 15_000,
  discover: 5_000,
};

type Result<K extends keyof CloudMapPort> = Awaited<ReturnType<CloudMapPort[K]>>;

export type ReadCaches = ReturnType<typeof createReadCaches>;

export const discoverKey = (ns: string, svc: string, q?: Record<string, string>): string =>
  `${ns}\0${svc}\0${q === undefined ? '' : JSON.stringify(Object.entries(q).sort())}`;

/**
 * The client's four read caches and what eviction needs to find a service's entries: the
 * names of namespaces and services by ID (learnt from listings and creates) and the
 * revision each discover result was read at.
 */
export function createReadCaches(opts: { ttl: CacheTtls; clock: Clock; metrics: CloudMapMetrics }) {
  const cache = <V>(name: keyof CacheTtls) =>
    createReadCache<V>({
      ttlMs: opts.ttl[name],
      clock: opts.clock,
      onLookup: (r) => opts.metrics.cache(name, r),
    });
  const namespaces = cache<Result<'listNamespaces'>>('namespaces');
  const services = cache<Result<'listServices'>>('services');
  const instances = cache<Result<'listInstances'>>('instances');
  const discover = cache<Result<'discoverInstances'>>('discover');
  const all = [namespaces, services, instances, discover];
  const nsNames = new Map<string, string>();
  const svcInfo = new Map<string, { namespaceId: string; name: string }>();
  const revisions = new Map<string, number>();
  /** Drops every discover result of `ns/svc`, whatever its query. */
  const dropDiscover = (ns: string, svc: string): void => {
    const prefix = discoverKey(ns, svc).slice(0, -1);
    discover.evictWhere((k) => k.startsWith(prefix));
  };
  return {
    namespaces,
    services,
    instances,
    discover,
    learnNamespaces(list: Result<'listNamespaces'>) {
      for (const ns of list) nsNames.set(ns.id, ns.name);
    },
    learnService(s: { id: string; namespaceId: string; name: string }) {
      svcInfo.set(s.id, { namespaceId: s.namespaceId, name: s.name });
    },
    namespaceOf: (serviceId: string) => svcInfo.get(serviceId)?.namespaceId,
    /** Drops a service's instances and discover results (a write changed them). */
    evictService(serviceId: string) {
      instances.evict(serviceId);
      const info = svcInfo.get(serviceId);
      const nsName = info === undefined ? undefined : nsNames.get(info.namespaceId);
      if (info === undefined || nsName === undefined) discover.clear();
      else dropDiscover(nsName, info.name);
    },
    /** Remembers the revision a discover result of `ns/svc` was read at. */
    readAt(ns: string, svc: string, revision: number) {
      revisions.set(discoverKey(ns, svc), revision);
    },
    /** A revision check saw `revision`: a moved revision drops that service's discover results. */
    revisionSeen(ns: string, svc: string, revision: number) {
      const key = discoverKey(ns, svc);
      const known = revisions.get(key);
      if (known === undefined || known === revision) return;
      revisions.delete(key);
      dropDiscover(ns, svc);
    },
    /** Drops `ns/svc`'s discover results whatever their revision (it was announced changed). */
    forgetDiscover(ns: string, svc: string) {
      revisions.delete(discoverKey(ns, svc));
      dropDiscover(ns, svc);
    },
    sweepExpired() {
      for (const c of all) c.sweepExpired();
    },
  };
}
