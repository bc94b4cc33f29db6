import {
  Attr,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  HEARTBEAT_SERVICE_NAME,
  inPool,
  isCloudMapNotFound,
  logFields,
  sleep,
  type FeedFollower,
} from '@cloudmap-mcs/core';
import { coveredByFeed, everyWriterVouched, isHeartbeat } from './coverage.js';
import { startFeedlessListings } from './feedless.js';
import { listingRound } from './listing.js';
import type { RoundKind } from './options.js';
import type { ServiceReads } from './reads.js';
import { fastPeriodFor, type PollPeriods } from './schedule.js';
import type { ServiceSnapshot } from './snapshot.js';
import { describe, keyOf, markNamespacesGood, type PollerState } from './state.js';

/** What the three rounds read from: the shared state, the reads and the feed (when on). */
export interface RoundContext {
  readonly state: PollerState;
  readonly reads: ServiceReads;
  readonly feed: FeedFollower | undefined;
  readonly periods: PollPeriods;
  /** The fast round's period when the feed is on (0: no feed). */
  readonly feedMs: number;
  readonly heartbeatMs: number;
  /** Read everything (listing + every service): the feed cannot say what changed. */
  readonly sweep: () => void;
  /** When the feed last asked for the heartbeats to be read again (read those read before). */
  readonly recheck: { askedAt: number | undefined };
  /** Namespaces with a tracked heartbeat service at the last slow round. */
  readonly knownHeartbeatNamespaces: Set<string>;
  /** Runs work outside any round that stopping the poller still waits for (loop.ts). */
  readonly background: (work: Promise<void>) => void;
  /** Whether the reads the feed handed out last are still running (one batch at a time). */
  readonly feedReads: { running: boolean };
  /** Whether listings of namespaces of writers without a feed are running (feedless.ts). */
  readonly feedlessListing: { running: boolean };
  /** When a heartbeat service not tracked yet was last looked for, by namespace (heartbeatsToFind). */
  readonly heartbeatLookedFor: Map<string, number>;
}

/**
 * The soonest a heartbeat service is read again when the feed asks (a writer's record moved
 * unlike an honest advance): a replayed or forged record can then make readers read the
 * heartbeats at most every 5 s, never more.
 */
const HEARTBEAT_RECHECK_MS = 5000;

/** The three rounds of the poller (poller.ts), each true when it succeeded. */
export function pollRounds(ctx: RoundContext): Record<RoundKind, () => Promise<boolean>> {
  return {
    slow: () => slowRound(ctx),
    fast: () => fastRound(ctx),
    refresh: () => refreshRound(ctx),
    resync: () => resyncRound(ctx),
  };
}

/**
 * While Cloud Map is unreachable a fast round is one call; true when it succeeded. A probe
 * with no answer within one period ends its round (the call runs on to its deadline and still
 * ends the outage if it succeeds): the next round probes on a fresh connection, so the network
 * healing is seen within one period, not one deadline (issue 31).
 */
async function probe(ctx: RoundContext): Promise<boolean> {
  const done = new AbortController();
  const period = sleep(ctx.state.clock, ctx.feedMs || ctx.periods.fastMs, done.signal);
  try {
    return await Promise.race([probeCall(ctx), period.then(() => false)]);
  } finally {
    done.abort();
  }
}

async function probeCall(ctx: RoundContext): Promise<boolean> {
  const { state, feed } = ctx;
  const { port, log } = state;
  const all = [...state.services.values()];
  const target = all.find(isHeartbeat) ?? all[0];
  try {
    if (feed !== undefined)
      await port
        .discoverInstancesRevision(FEED_NAMESPACE_NAME, feedServiceName(state.opts.clustersetId))
        .catch((e: unknown) => {
          // No feed service is an answer: Cloud Map is reachable.
          if (!isCloudMapNotFound(e)) throw e;
        });
    else if (target === undefined) await port.listNamespaces();
    else await port.discoverInstancesRevision(target.namespace, target.name);
    state.callSucceeded();
    return true;
  } catch (error) {
    state.readError(target === undefined ? 'listNamespaces' : 'discoverInstancesRevision');
    log.debug('cloud map probe failed', { [logFields.error]: describe(error) });
    return false;
  }
}

/**
 * The services whose own check is due: heartbeat services every `heartbeatMs`, the others
 * when the feed does not vouch for them, every (budgeted) fast period.
 */
function dueServices(ctx: RoundContext): ServiceSnapshot[] {
  const { state, feed, periods, heartbeatMs } = ctx;
  const all = [...state.services.values()];
  if (feed === undefined) return all;
  const allVouched = everyWriterVouched(feed, all);
  const uncovered = all.filter(
    (s) => !isHeartbeat(s) && !coveredByFeed(feed, ctx.reads, s, allVouched),
  );
  const period = fastPeriodFor(periods, uncovered.length, state.opts.requestBudgetPerSecond);
  // Half a round of slack: a check falls in the round nearest its due time, not the next.
  const slack = ctx.feedMs / 2;
  const now = state.clock.now();
  const readBefore = (s: ServiceSnapshot, at: number | undefined): boolean =>
    at !== undefined && (ctx.reads.checkedAt(keyOf(s.namespace, s.name)) ?? -Infinity) < at;
  const due = (s: ServiceSnapshot, every: number): boolean =>
    now - (ctx.reads.checkedAt(keyOf(s.namespace, s.name)) ?? -Infinity) >= every - slack;
  return [
    ...all.filter(
      (s) =>
        isHeartbeat(s) &&
        (due(s, heartbeatMs) ||
          (readBefore(s, ctx.recheck.askedAt) && due(s, HEARTBEAT_RECHECK_MS))),
    ),
    ...uncovered.filter((s) => due(s, period)),
  ];
}

/**
 * Namespaces where a feed writer has records but no heartbeat service is tracked, due for a
 * look: a writer's heartbeat is what vouches for its feed, and it may create the heartbeat
 * service after the reader first read the namespace (the feed does not name it). Without
 * this only the next listing (a minute or more) would find it, and the writer's services
 * would be checked one by one until then. Looked for at the per-service check period, which
 * those services are checked at meanwhile anyway: one call more per namespace, and only
 * while it is missing.
 */
function heartbeatsToFind(ctx: RoundContext): string[] {
  const { state, feed, heartbeatLookedFor } = ctx;
  if (feed === undefined || !feed.baselined) return [];
  const tracked = new Set<string>();
  for (const s of state.services.values()) if (isHeartbeat(s)) tracked.add(s.namespace);
  const wanted = new Set<string>();
  for (const s of state.services.values()) {
    if (isHeartbeat(s) || tracked.has(s.namespace) || wanted.has(s.namespace)) continue;
    if (s.instances.some((i) => feed.writers.has(i.attributes[Attr.ClusterId] ?? '')))
      wanted.add(s.namespace);
  }
  // Remembered only for the namespaces still looked for.
  for (const ns of [...heartbeatLookedFor.keys()])
    if (!wanted.has(ns)) heartbeatLookedFor.delete(ns);
  const now = state.clock.now();
  const due = [...wanted].filter(
    (ns) => now - (heartbeatLookedFor.get(ns) ?? -Infinity) >= ctx.periods.fastMs,
  );
  for (const ns of due) heartbeatLookedFor.set(ns, now);
  return due;
}

async function fastRound(ctx: RoundContext): Promise<boolean> {
  const { state, feed } = ctx;
  if (state.unreachable && !(await probe(ctx))) return false;
  let attempts = 0;
  let failed = 0;
  const due = dueServices(ctx);
  attempts += due.length;
  // The feed's own calls count in this round. The reads it hands out run outside the round,
  // one batch at a time: a slow read of a name the feed gave (a flood of forged names) never
  // holds the next round's heartbeat reads and revision checks (issue 31), and the feed waits
  // for its batch, so it never has more than one budget of reads in flight. A failed read
  // marks its service failing (state.markError) like any other.
  const feedPart = async (): Promise<void> => {
    if (feed === undefined || ctx.feedReads.running) return;
    attempts++;
    const result = await feed.round();
    if (!result.ok) failed++;
    // Read at the next round (this one's due checks are already under way).
    if (result.recheckHeartbeats) ctx.recheck.askedAt = state.clock.now();
    if (result.sweep) ctx.sweep();
    if (!feed.baselined || result.sweep || result.read.length === 0) return;
    state.log.debug('change feed names services to read', {
      services: result.read.map((s) => `${s.namespace}/${s.name}`).join(' '),
    });
    ctx.feedReads.running = true;
    ctx.background(
      inPool(result.read, state.concurrency, async (s) => {
        await ctx.reads.readNamed(s.namespace, s.name);
      }).finally(() => {
        ctx.feedReads.running = false;
      }),
    );
  };
  startFeedlessListings(ctx);
  const lookFor = heartbeatsToFind(ctx);
  attempts += lookFor.length;
  const duePart = (): Promise<void> =>
    inPool([...due, ...lookFor], state.concurrency, async (s) => {
      const ok =
        typeof s === 'string'
          ? await ctx.reads.readNamed(s, HEARTBEAT_SERVICE_NAME)
          : await (isHeartbeat(s) ? ctx.reads.fetch(s) : ctx.reads.check(s));
      if (!ok) failed++;
    });
  await Promise.all([feedPart(), duePart()]);
  // A round fails only when nothing in it succeeded (issue 12).
  return failed === 0 || failed < attempts;
}

async function slowRound(ctx: RoundContext): Promise<boolean> {
  const { feed } = ctx;
  // The feed's baseline comes first: the listing that follows reads everything after it.
  if (feed !== undefined && !feed.baselined) await feed.round();
  for (const namespace of forgottenNamespaces(ctx)) feed?.forgetNamespace(namespace);
  return listingRound(ctx.state, ctx.reads, feed !== undefined);
}

async function resyncRound(ctx: RoundContext): Promise<boolean> {
  let ok = true;
  await inPool([...ctx.state.services.values()], ctx.state.concurrency, async (s) => {
    if (!(await ctx.reads.fetch(s))) ok = false;
  });
  markNamespacesGood(ctx.state, [...ctx.state.namespaceGoodMs.keys()]);
  return ok;
}

/**
 * One backstop read: the service read longest ago (never read first). Spread this way, the
 * backstop costs the same every minute instead of a burst of every service each period,
 * and its cost shows in any minute measured.
 */
async function refreshRound(ctx: RoundContext): Promise<boolean> {
  let oldest: ServiceSnapshot | undefined;
  for (const s of ctx.state.services.values())
    if (oldest === undefined || (s.fetchedAtMs ?? -Infinity) < (oldest.fetchedAtMs ?? -Infinity))
      oldest = s;
  return oldest === undefined ? true : ctx.reads.fetch(oldest);
}

/** Namespaces whose heartbeat service is no longer tracked (the listing dropped it). */
function forgottenNamespaces(ctx: RoundContext): string[] {
  const tracked = new Set<string>();
  for (const s of ctx.state.services.values()) if (isHeartbeat(s)) tracked.add(s.namespace);
  const known = ctx.knownHeartbeatNamespaces;
  const gone = [...known].filter((ns) => !tracked.has(ns));
  known.clear();
  for (const ns of tracked) known.add(ns);
  return gone;
}
