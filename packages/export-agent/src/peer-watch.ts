import type { Clock, CloudMapPort, Logger } from '@cloudmap-mcs/core';
import { createPeerState, foreign, peerRound, type PeerState } from './peer-round.js';

/**
 * How the export agent learns that another cluster changed a service it exports (exported it,
 * un-exported it, or changed it), so each ServiceExport's `Conflict` condition follows the
 * other clusters without a local event (issue 12). The reconciler says which Cloud Map service
 * each exported key lives in, which revision it last read and which other clusters it saw
 * there; the watch calls `onChange(key)` when one of them changed it.
 */
export interface PeerWatch {
  /**
   * Watches `key`'s Cloud Map service; `seenRevision` is the revision the reconcile read,
   * `others` the ids of the other clusters whose records it saw there.
   */
  watch(
    key: string,
    service: WatchedService,
    seenRevision?: number,
    others?: readonly string[],
  ): void;
  /** Stops watching `key` (un-exported, or its export is no longer valid). */
  unwatch(key: string): void;
  /** How many keys are watched (tests, metrics). */
  size(): number;
  /** Rounds run (tests). */
  rounds(): number;
  start(): void;
  stop(): Promise<void>;
}

export interface WatchedService {
  namespaceName: string;
  serviceName: string;
  /** For the instance-count check (ListServices of the namespace); absent: no such check. */
  namespaceId?: string | undefined;
}

export interface PeerWatchOptions {
  cloudMap: Pick<CloudMapPort, 'discoverInstancesRevision' | 'discoverInstances' | 'listServices'>;
  clock: Clock;
  /** The round: the feed's revision, and the revision of each key the feed cannot vouch for. */
  periodMs: number;
  /** At most this many per-service checks per second: more stretch the period (0: no limit). */
  budgetPerSecond: number;
  /** This cluster's identity (its own feed entries are its own writes). */
  identity: () => { clusterId: string; clustersetId: string } | undefined;
  /** Every this many rounds, the instance counts of the watched services (default 12). */
  countEveryRounds?: number;
  /** At most this many ListServices pages a minute for the counts (stretches them; 0: none). */
  countBudgetPerMinute?: number | undefined;
  /** Up to this fraction of a period added at random, so clusters spread out. */
  jitter?: number;
  onChange: (key: string) => void;
  /** After every round (metrics). */
  onRound?: (() => void) | undefined;
  /**
   * Drops cached reads of a service before its key is requeued for a change the feed or an
   * instance count announced (a revision check does it by itself in the Cloud Map client).
   */
  forget?: ((namespaceName: string, serviceName: string) => void) | undefined;
  logger: Logger;
}

/**
 * The watch over the clusterset change feed (ADR 0018). Each round: one revision check of the
 * feed service; when it moved, the feed is read and every watched key another cluster's
 * entry names is requeued (all of them when the feed cannot say: a new writer, a new epoch,
 * a gap, a writer gone). Keys with records of clusters that do not write the feed (the AWS
 * controller, older agents), and every key while there is no feed, keep a revision check per
 * round. Every `countEveryRounds` rounds the namespaces' ListServices instance counts catch
 * a non-writer joining a service the feed vouched for. Instances are never read here: the
 * reconcile that follows reads them. Rounds never overlap; nothing is called with no keys.
 */
export function createPeerWatch(opts: PeerWatchOptions): PeerWatch {
  const s = createPeerState(opts);
  const { entries } = s;
  return {
    watch(key, service, seenRevision, others = []) {
      const entry = entries.get(key);
      const same =
        entry !== undefined &&
        entry.service.namespaceName === service.namespaceName &&
        entry.service.serviceName === service.serviceName;
      if (!same) {
        const { namespaceName, serviceName, namespaceId } = service;
        entries.set(key, {
          service: { namespaceName, serviceName, namespaceId },
          revision: seenRevision,
          others: [...others],
          checkedAtMs: opts.clock.now(),
        });
        return;
      }
      entry.others = [...others];
      entry.checkedAtMs = opts.clock.now();
      if (seenRevision !== undefined && (entry.revision ?? -1) < seenRevision)
        entry.revision = seenRevision;
    },
    unwatch: (key) => void entries.delete(key),
    size: () => entries.size,
    rounds: () => s.rounds,
    start() {
      if (s.running) return;
      s.running = true;
      schedule(s);
    },
    async stop() {
      s.running = false;
      if (s.timer !== undefined) s.opts.clock.clearTimer(s.timer);
      await s.round;
    },
  };
}

/** The next round, a period (stretched to the budget, jittered) after the last one ended. */
function schedule(s: PeerState): void {
  if (!s.running) return;
  const { opts } = s;
  const checked = [...s.entries.values()].filter((e) => foreign(s, e)).length;
  const base =
    opts.budgetPerSecond <= 0
      ? opts.periodMs
      : Math.max(opts.periodMs, Math.ceil((checked / opts.budgetPerSecond) * 1000));
  const delay = Math.round(base * (1 + Math.max(0, opts.jitter ?? 0.1) * Math.random()));
  s.timer = opts.clock.setTimer(() => {
    opts.onRound?.();
    s.round = peerRound(s)
      .catch((error: unknown) => opts.logger.warn('peer watch round failed', { err: error }))
      .finally(() => schedule(s));
  }, delay);
}
