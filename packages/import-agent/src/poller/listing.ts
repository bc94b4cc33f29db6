import { inPool, listServicesPages, logFields, splitKey } from '@cloudmap-mcs/core';
import { referencedShards } from './shards.js';
import type { ServiceSnapshot } from './snapshot.js';
import type { ServiceReads } from './reads.js';
import { describe, keyOf, markNamespacesGood, track, type PollerState } from './state.js';

/**
 * The slow round: ListNamespaces, then ListServices of each Cloud Map namespace that exists
 * in this cluster (namespace sameness; public DNS namespaces never). Services not tracked yet
 * are read at once; services a successful listing no longer shows are dropped (their imports
 * lose them). It finds what the change feed cannot name: services of writers that do not
 * write the feed (the AWS controller, non-Kubernetes writers, older agents).
 * True when every call succeeded.
 */
export async function listingRound(
  state: PollerState,
  reads: ServiceReads,
  /** Whether some services have no revision check of their own (the change feed is on). */
  countChecks: boolean,
): Promise<boolean> {
  const { port, log, services, opts } = state;
  const startedAt = state.clock.now();
  let namespaces;
  try {
    namespaces = (await port.listNamespaces()).filter(
      (ns) => ns.type !== 'DNS_PUBLIC' && opts.isLocalNamespace(ns.name),
    );
    state.callSucceeded();
  } catch (error) {
    state.readError('listNamespaces');
    log.warn('listing cloud map namespaces failed', { [logFields.error]: describe(error) });
    return false;
  }
  let ok = true;
  let calls = 1;
  let paged = false;
  const listed = new Set<string>();
  const counts = new Map<string, number>();
  const unlisted = new Set<string>(); // namespaces whose services could not be listed
  await inPool(namespaces, state.concurrency, async (ns) => {
    try {
      const listedAt = state.clock.now();
      const page = await port.listServices(ns.id);
      const pages = listServicesPages(page.length);
      state.namespaceListings.set(ns.name, { id: ns.id, pages, listedAt });
      calls += pages;
      if (pages > 1) paged = true;
      for (const svc of page) {
        listed.add(keyOf(ns.name, svc.name));
        if (svc.instanceCount !== undefined)
          counts.set(keyOf(ns.name, svc.name), svc.instanceCount);
      }
      state.callSucceeded();
    } catch (error) {
      ok = false;
      unlisted.add(ns.name);
      state.readError('listServices');
      log.warn('listing cloud map services failed', {
        [logFields.cloudMapNamespace]: ns.name,
        [logFields.error]: describe(error),
      });
    }
  });
  state.lastListing = { calls, paged };
  // A shard named by a tracked export record stays even if a listing that started before it
  // was created misses it (its reads fail, and keep the last good state, if it is gone).
  for (const s of services.values())
    for (const name of referencedShards(s, opts.clustersetId)) listed.add(keyOf(s.namespace, name));
  dropUnlisted(state, listed, unlisted, startedAt);
  const fresh = [...listed]
    .filter((key) => !services.has(key))
    .map((key) => track(state, ...splitKey(key)));
  await inPool(fresh, state.concurrency, async (s) => {
    if (!(await reads.fetch(s))) ok = false;
  });
  // A tracked service whose instance count moved since the last listing gets its revision
  // checked: a writer that does not write the change feed (the AWS controller) joining a
  // service the feed vouched for is seen within a slow period, at no cost while idle.
  const moved = [...(countChecks ? counts : [])]
    .filter(
      ([key, n]) =>
        (state.instanceCounts.get(key) ?? n) !== n &&
        !fresh.some((s) => keyOf(s.namespace, s.name) === key),
    )
    .map(([key]) => services.get(key))
    .filter((s): s is ServiceSnapshot => s !== undefined);
  for (const [key, n] of counts) state.instanceCounts.set(key, n);
  for (const key of state.instanceCounts.keys())
    if (!services.has(key)) state.instanceCounts.delete(key);
  await inPool(moved, state.concurrency, async (s) => {
    if (!(await reads.check(s))) ok = false;
  });
  namespacesListed(state, namespaces, unlisted);
  return ok;
}

/** The local namespaces listed: those whose services all read well are good as of now. */
function namespacesListed(
  state: PollerState,
  namespaces: readonly { name: string }[],
  unlisted: ReadonlySet<string>,
): void {
  const local = namespaces.map((ns) => ns.name);
  for (const ns of state.namespaceGoodMs.keys())
    if (!local.includes(ns)) state.namespaceGoodMs.delete(ns);
  for (const ns of state.namespaceListings.keys())
    if (!local.includes(ns)) state.namespaceListings.delete(ns);
  markNamespacesGood(
    state,
    local.filter((ns) => !unlisted.has(ns)),
  );
}

/**
 * Gone: no longer listed by a listing that succeeded, or the namespace is not local any more.
 * A service read successfully since the listing started stays: the change feed named it after
 * the listing ran (a listing is not a snapshot; the next one will show it).
 */
function dropUnlisted(
  state: PollerState,
  listed: ReadonlySet<string>,
  unlisted: ReadonlySet<string>,
  startedAt: number,
): void {
  for (const [key, s] of state.services) {
    if (listed.has(key) || unlisted.has(s.namespace)) continue;
    const local = state.opts.isLocalNamespace(s.namespace);
    if (local && s.fetchedAtMs !== undefined && s.fetchedAtMs >= startedAt) continue;
    state.services.delete(key);
    if (local && s.instances.length > 0) state.notify({ ...s, instances: [] });
  }
}
