import {
  Attr,
  HEARTBEAT_SERVICE_NAME,
  inPool,
  isShardServiceName,
  listServicesPages,
  logFields,
  type FeedFollower,
} from '@cloudmap-mcs/core';
import type { ServiceReads } from './reads.js';
import type { RoundContext } from './rounds.js';
import type { ServiceSnapshot } from './snapshot.js';
import { describe, keyOf, track, type PollerState } from './state.js';

/**
 * Listings of the namespaces that hold records of a writer without a change feed (ADR 0018,
 * decision 13; issue 35). Such a writer (the AWS Go controller, a non-Kubernetes writer, an
 * export agent with the feed off) announces nothing, so without this a service it creates is
 * found only by the full listing (60 s). A namespace where some tracked service has an
 * instance of a cluster without a feed record is listed on its own (one ListServices) every
 * fast period (`--poll-fast-seconds`, 5 s), stretched by its page count (a namespace of 250
 * services, 3 pages, every 15 s): at most 12 ListServices pages a minute per such namespace at
 * the default, whatever its size. New services it shows are read at once. Namespaces whose
 * services are all of feed writers are listed only by the full listing, as before.
 */
interface FeedlessNamespace {
  name: string;
  id: string;
}

/**
 * Starts the listings due, outside the fast round and one batch at a time (as the feed's
 * reads): a slow or throttled ListServices never holds the feed and heartbeat checks.
 */
export function startFeedlessListings(ctx: RoundContext): void {
  if (ctx.feedlessListing.running) return;
  const { state } = ctx;
  const due = feedlessListingsDue(state, ctx.feed, ctx.periods.fastMs);
  if (due.length === 0) return;
  ctx.feedlessListing.running = true;
  const done = (): void => {
    ctx.feedlessListing.running = false;
  };
  ctx.background(listFeedless(state, ctx.reads, due).then(done, done));
}

/**
 * The namespaces due for a listing of their own: with the feed on and read once, holding a
 * tracked service with an instance of a cluster that has no valid feed record, listed (by
 * anything) at least once, and not within the fast period times their pages (no slack: the
 * first feed round after that, so never more often). Marks the ones returned as listed now.
 */
function feedlessListingsDue(
  state: PollerState,
  feed: FeedFollower | undefined,
  fastMs: number,
): FeedlessNamespace[] {
  if (feed === undefined || !feed.baselined) return [];
  const wanted = new Set<string>();
  for (const s of state.services.values()) {
    if (wanted.has(s.namespace) || !feedlessWriterIn(s, feed)) continue;
    wanted.add(s.namespace);
  }
  const now = state.clock.now();
  const due: FeedlessNamespace[] = [];
  for (const name of wanted) {
    const listing = state.namespaceListings.get(name);
    // Never listed: no ID yet; the full listing comes first.
    if (listing === undefined || now - listing.listedAt < fastMs * listing.pages) continue;
    listing.listedAt = now; // a failed listing is tried again a period later, not every round
    due.push({ name, id: listing.id });
  }
  return due;
}

/** Whether `s` holds an instance of a cluster without a feed record (ours only: shards, heartbeats). */
function feedlessWriterIn(s: ServiceSnapshot, feed: FeedFollower): boolean {
  if (s.name === HEARTBEAT_SERVICE_NAME || isShardServiceName(s.name)) return false;
  return s.instances.some((i) => !feed.writers.has(i.attributes[Attr.ClusterId] ?? ''));
}

/**
 * Lists each namespace and reads the services not tracked yet. Nothing is dropped here: a
 * service gone is the full listing's to drop.
 */
async function listFeedless(
  state: PollerState,
  reads: ServiceReads,
  namespaces: readonly FeedlessNamespace[],
): Promise<void> {
  await inPool(namespaces, state.concurrency, async (ns) => {
    let listed;
    try {
      listed = await state.port.listServices(ns.id);
      state.callSucceeded();
    } catch (error) {
      state.readError('listServices');
      state.log.debug('listing a namespace of writers without a feed failed', {
        [logFields.cloudMapNamespace]: ns.name,
        [logFields.error]: describe(error),
      });
      return;
    }
    const listing = state.namespaceListings.get(ns.name);
    if (listing !== undefined) listing.pages = listServicesPages(listed.length);
    const fresh = listed
      .filter((svc) => !state.services.has(keyOf(ns.name, svc.name)))
      .map((svc) => track(state, ns.name, svc.name));
    await inPool(fresh, state.concurrency, async (s) => {
      await reads.fetch(s);
    });
  });
}
