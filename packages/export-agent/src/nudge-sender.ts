import { BlockList, isIPv6 } from 'node:net';
import { peerRequest } from '@cloudmap-mcs/core/runtime';
import {
  Attr,
  decodeFeeds,
  encodeNudgeMessage,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  logFields,
  nudgeAddressProblem,
  NUDGE_PATH,
  type Clock,
  type CloudMapPort,
  type ClusterIdentity,
  type Logger,
  type Nudge,
} from '@cloudmap-mcs/core';

/**
 * The writer's end of nudges (ADR 0018 decision 11): after each successful change-feed write,
 * POST `{clustersetId, clusterId, epoch, seq}` to `/nudge` of every import agent of the
 * clusterset that publishes an address (`FEED_NUDGE` of each feed record, and this cluster's
 * own import agent's Lease), so they check the feed now instead of at their next slow round.
 *
 * - Targets come from one read of the feed, done at write time when the last one is older
 *   than `targetsMaxAgeMs` (so an idle agent reads nothing).
 * - Only IP literals that are not unspecified, multicast or link-local (never the instance
 *   metadata service at 169.254.169.254) are contacted, whatever a feed record says; a 1 s
 *   timeout; one request in flight per target, a newer nudge waiting behind it replaces any
 *   older one waiting (the importer only needs the latest number); one that does not get
 *   through (no connection, no answer) is sent once more unless a newer one waits.
 * - Never throws and never delays the feed writer: a lost nudge costs the importer one slow
 *   round (5 s) at most, and the importer notices and stops relying on nudges (a miss).
 */
export interface NudgeSender {
  written(position: { epoch: string; seq: number }): void;
  stop(): void;
}

export type NudgeResult = 'sent' | 'failed' | 'refused';

export interface NudgeSenderOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstances'>;
  identity: () => ClusterIdentity | undefined;
  /** This cluster's import agent's address from its Lease (undefined: none published). */
  ownImporter: () => string | undefined;
  /** Drops cached reads of the feed so the target read is fresh. */
  forgetReads?: (namespaceName: string, serviceName: string) => void;
  clock: Clock;
  logger: Logger;
  onResult?: (result: NudgeResult) => void;
  timeoutMs?: number;
  targetsMaxAgeMs?: number;
  /** The HTTP client (default: core's `peerRequest`, plain node:http). */
  request?: typeof peerRequest;
}

const blocked = new BlockList();
blocked.addSubnet('0.0.0.0', 8, 'ipv4');
blocked.addSubnet('169.254.0.0', 16, 'ipv4');
blocked.addSubnet('224.0.0.0', 4, 'ipv4');
blocked.addSubnet('240.0.0.0', 4, 'ipv4');
blocked.addAddress('::', 'ipv6');
blocked.addSubnet('fe80::', 10, 'ipv6');
blocked.addSubnet('ff00::', 8, 'ipv6');

/** Why a nudge address is never contacted, or undefined when it may be. */
export function nudgeTargetRefusal(address: string): string | undefined {
  const problem = nudgeAddressProblem(address);
  if (problem !== undefined) return problem;
  const host = address.startsWith('[')
    ? address.slice(1, address.lastIndexOf(']'))
    : address.slice(0, address.lastIndexOf(':'));
  return blocked.check(host, isIPv6(host) ? 'ipv6' : 'ipv4')
    ? `unspecified, link-local or multicast address: ${address}`
    : undefined;
}

interface Target {
  inFlight: boolean;
  waiting: Nudge | undefined;
  /** The waiting nudge is a retry of one that did not get through: not retried again. */
  retry: boolean;
}

/**
 * One POST; its outcome is counted, never thrown. False when it did not get through (no
 * connection, no answer in time): worth one retry. An answer, even a refusal, is final.
 */
async function post(opts: NudgeSenderOptions, address: string, nudge: Nudge): Promise<boolean> {
  const { logger } = opts;
  try {
    const { status } = await (opts.request ?? peerRequest)(address, NUDGE_PATH, {
      method: 'POST',
      body: encodeNudgeMessage(nudge),
      timeoutMs: opts.timeoutMs ?? 1_000,
    });
    opts.onResult?.(status >= 200 && status < 300 ? 'sent' : 'failed');
    if (status >= 300) logger.debug('nudge refused', { address, status });
    return true;
  } catch (error) {
    opts.onResult?.('failed');
    logger.debug('nudge failed', { address, [logFields.error]: error });
    return false;
  }
}

export function createNudgeSender(opts: NudgeSenderOptions): NudgeSender {
  const { clock, logger } = opts;
  const maxAgeMs = opts.targetsMaxAgeMs ?? 30_000;
  let fromFeed: string[] = [];
  let readAtMs = -Infinity;
  let reading: Promise<void> | undefined;
  const targets = new Map<string, Target>();
  const refusedSeen = new Set<string>();
  let stopped = false;

  const readTargets = async (cluster: ClusterIdentity): Promise<void> => {
    const service = feedServiceName(cluster.clustersetId);
    try {
      opts.forgetReads?.(FEED_NAMESPACE_NAME, service);
      const read = await opts.cloudMap.discoverInstances(FEED_NAMESPACE_NAME, service, {
        [Attr.ClustersetId]: cluster.clustersetId,
      });
      const { feeds } = decodeFeeds(read.instances, { clustersetId: cluster.clustersetId });
      fromFeed = feeds.map((f) => f.nudge ?? '').filter((a) => a !== '');
      readAtMs = clock.now();
    } catch (error) {
      // Keep the last list; the next write tries again.
      logger.debug('reading nudge targets failed', { [logFields.error]: error });
    }
  };

  const send = (address: string, nudge: Nudge, retry = false): void => {
    const target = targets.get(address) ?? { inFlight: false, waiting: undefined, retry: false };
    targets.set(address, target);
    if (target.inFlight) {
      target.waiting = nudge;
      target.retry = retry;
      return;
    }
    target.inFlight = true;
    void post(opts, address, nudge).then((through) => {
      target.inFlight = false;
      // Once, at once, unless a newer nudge is waiting: a nudge lost to a busy moment makes
      // the importer distrust nudges for a while (a miss), a retry usually lands in its window.
      if (!through && !retry && target.waiting === undefined) {
        target.waiting = nudge;
        target.retry = true;
      }
      const next = target.waiting;
      const nextIsRetry = target.retry;
      target.waiting = undefined;
      target.retry = false;
      if (next !== undefined && !stopped) send(address, next, nextIsRetry);
    });
  };

  const fanOut = (cluster: ClusterIdentity, position: { epoch: string; seq: number }): void => {
    if (stopped) return;
    const nudge: Nudge = {
      clustersetId: cluster.clustersetId,
      clusterId: cluster.clusterId,
      ...position,
    };
    const own = opts.ownImporter();
    const all = new Set([...fromFeed, ...(own === undefined ? [] : [own])]);
    for (const address of all) {
      const refusal = nudgeTargetRefusal(address);
      if (refusal === undefined) {
        send(address, nudge);
        continue;
      }
      opts.onResult?.('refused');
      if (!refusedSeen.has(address)) {
        refusedSeen.add(address);
        logger.warn('nudge address refused; that import agent is not nudged', { reason: refusal });
      }
    }
  };

  return {
    written(position) {
      const cluster = opts.identity();
      if (cluster === undefined || stopped) return;
      if (clock.now() - readAtMs < maxAgeMs) return fanOut(cluster, position);
      reading ??= readTargets(cluster).finally(() => (reading = undefined));
      void reading.then(() => fanOut(cluster, position));
    },
    stop() {
      stopped = true;
    },
  };
}
