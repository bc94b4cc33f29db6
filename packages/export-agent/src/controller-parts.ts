import type { EventHub } from '@cloudmap-mcs/core';
import { createTargetResolver, type TargetResolver } from './cloudmap-target.js';
import type { ExportControllerOptions } from './controller-options.js';
import { createFeedWriter, type FeedWriter } from './feed-writer.js';
import { createHeartbeats, type Heartbeats } from './heartbeat.js';
import { createPeerWatch, type PeerWatch } from './peer-watch.js';
import type { PendingWrites } from './pending-writes.js';
import type { ExportReconcilerDeps } from './reconciler-state.js';

// The export controller's parts, each built from the options and the parts built before it
// (controller.ts builds them in order).

/** The resync and the peer watch's counts each get half the background budget. */
const halfOf = (budget: number | undefined): number | undefined =>
  budget === undefined ? undefined : budget / 2;

export function heartbeatsFor(
  opts: ExportControllerOptions,
  resolver: TargetResolver,
  pending: PendingWrites,
  feed: FeedWriter | undefined,
): Heartbeats {
  return createHeartbeats({
    cloudMap: opts.cloudMap,
    resolver,
    pending,
    identity: () => opts.sources.identity(),
    now: opts.wallNow,
    periodMs: opts.heartbeatPeriodMs,
    logger: opts.logger,
    onRenewal: opts.exportMetrics?.heartbeatRenewal,
    onCurrent: opts.exportMetrics?.heartbeatCurrent,
    ...(feed === undefined
      ? {}
      : {
          feed: () => feed.written,
          feedStarting: () => feed.written === undefined && feed.state.failures === 0,
        }),
  });
}

export function peerWatchFor(opts: ExportControllerOptions, changed: EventHub<string>): PeerWatch {
  return createPeerWatch({
    cloudMap: opts.cloudMap,
    clock: opts.clock,
    identity: () => opts.sources.identity(),
    periodMs: opts.peerCheckMs,
    budgetPerSecond: opts.peerCheckBudgetPerSecond,
    countBudgetPerMinute: halfOf(opts.backgroundBudgetPerMinute),
    logger: opts.logger.child({ component: 'peer-watch' }),
    forget: (ns, svc) => opts.cloudMap.invalidateDiscover(ns, svc),
    onRound: opts.exportMetrics?.peerRound,
    onChange: (key) => changed.emit('update', key),
  });
}

export function feedWriterFor(
  opts: ExportControllerOptions,
  feed: NonNullable<ExportControllerOptions['feed']>,
  epochWritten: EventHub<undefined>,
): FeedWriter {
  const { clock, logger } = opts;
  return createFeedWriter({
    cloudMap: opts.cloudMap,
    // Its own resolver: the feed namespace is always HTTP, whatever --dns-records says.
    resolver: createTargetResolver({
      cloudMap: opts.cloudMap,
      tags: opts.tags,
      logger,
      now: () => clock.now(),
    }),
    identity: () => opts.sources.identity(),
    clock,
    now: opts.wallNow,
    logger: logger.child({ component: 'feed-writer' }),
    minIntervalMs: feed.minIntervalMs,
    onWrite: opts.exportMetrics?.feedWrite,
    onEpochWritten: () => epochWritten.emit('update', undefined),
  });
}

export function reconcilerDeps(
  opts: ExportControllerOptions,
  parts: {
    resolver: TargetResolver;
    pending: PendingWrites;
    feed: FeedWriter | undefined;
    peers: PeerWatch | undefined;
  },
  exportsChanged: EventHub<undefined>,
): ExportReconcilerDeps {
  const { feed, peers } = parts;
  return {
    sources: opts.sources,
    writer: opts.writer,
    cloudMap: opts.cloudMap,
    resolver: parts.resolver,
    pending: parts.pending,
    logger: opts.logger,
    now: () => new Date(opts.wallNow()),
    resyncMs: opts.resyncMs,
    resyncBudgetPerMinute: halfOf(opts.backgroundBudgetPerMinute),
    pendingRequeueMs: opts.pendingRequeueMs,
    onExportsChanged: () => exportsChanged.emit('update', undefined),
    ...(feed === undefined ? {} : { onWritesSubmitted: (ns, name) => feed.changed(ns, name) }),
    podLabelAttributes: opts.podLabelAttributes,
    ...(peers === undefined ? {} : { peers }),
  };
}
