import { randomBytes } from 'node:crypto';
import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  logFields,
  MAX_FEED_SEQ,
  type Clock,
  type CloudMapPort,
  type ClusterIdentity,
  type FeedEntry,
  type Logger,
  type TimerHandle,
} from '@cloudmap-mcs/core';
import type { CloudMapTarget, TargetResolver } from './cloudmap-target.js';

/**
 * The writer side of the clusterset change feed (ADR 0018, docs/cloudmap-schema.md "Change
 * feed"): this cluster's one instance in the feed service `feedServiceName(clusterset)` of the
 * Cloud Map namespace `_mcs-feed`, re-registered whenever the reconciler changed a service's
 * records, naming the services changed recently with the sequence number that announced them.
 *
 * - Coalesced: at most one write per `minIntervalMs`; changes arriving meanwhile go together.
 * - Ordered after the records: the controller calls `changed` when a write operation of the
 *   service completed (Cloud Map applied it), so a reader that follows the feed reads the new
 *   records. `hint` (at submission) only lowers latency: the completion announces again.
 * - A new epoch per process (and when the sequence number would wrap): readers cannot know
 *   what a crashed incarnation wrote without announcing, so they sweep.
 * - Never a source of truth: a failed write is retried with backoff and logged; readers that
 *   miss it converge by their sweeps and backstops.
 */
export interface FeedWriter {
  /** A write of service N/S completed: announce it (coalesced). */
  changed(namespace: string, name: string): void;
  /** Writes of N/S were submitted: announce early (the completion announces again). */
  hint(namespace: string, name: string): void;
  /** Writes this incarnation's first record (its epoch), then follows `changed`. */
  start(): void;
  stop(): Promise<void>;
  /** The current record's state (tests, metrics). */
  readonly state: { epoch: string; seq: number; floor: number; pending: number };
}

export type FeedWriteResult = 'success' | 'throttled' | 'error' | 'duplicate';

export interface FeedWriterOptions {
  cloudMap: Pick<CloudMapPort, 'registerInstance'>;
  /** Finds or creates the feed namespace and service (always HTTP, never DNS). */
  resolver: TargetResolver;
  identity: () => ClusterIdentity | undefined;
  clock: Clock;
  /** Wall time, ms since the epoch (FEED_UPDATED_AT). */
  now: () => number;
  logger: Logger;
  /** Default 1,000 ms: at most one RegisterInstance of the feed per second. */
  minIntervalMs?: number;
  /** Ceiling of the retry backoff after failed writes (default 30 s). */
  maxBackoffMs?: number;
  /** Defaults to random base-36 text; injected by tests. */
  newEpoch?: () => string;
  onWrite?: (result: FeedWriteResult) => void;
}

const randomEpoch = (): string => BigInt(`0x${randomBytes(8).toString('hex')}`).toString(36);

const THROTTLING = new Set(['ThrottlingException', 'RequestLimitExceeded', 'TooManyRequests']);

export function createFeedWriter(opts: FeedWriterOptions): FeedWriter {
  const { clock, logger } = opts;
  const minInterval = opts.minIntervalMs ?? 1000;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;
  const newEpoch = opts.newEpoch ?? randomEpoch;
  let epoch = newEpoch();
  let seq = 0;
  let floor = 0;
  /** What the next record lists (the codec keeps only what fits; older ones raise the floor). */
  let changes: FeedEntry[] = [];
  const dirty = new Set<string>();
  let target: CloudMapTarget | undefined;
  /** The current seq has not been written successfully (the start record included). */
  let unwritten = true;
  let running = false;
  let timer: TimerHandle | undefined;
  let writing: Promise<void> | undefined;
  let lastWriteAt = -Infinity;
  let failures = 0;
  /** A failure streak was logged (its end is logged too). */
  let warned = false;

  const schedule = (): void => {
    if (!running || timer !== undefined || writing !== undefined) return;
    if (dirty.size === 0 && !unwritten) return;
    const backoff = failures === 0 ? 0 : Math.min(maxBackoff, 500 * 2 ** Math.min(failures, 10));
    const delay = Math.max(0, lastWriteAt + minInterval - clock.now(), backoff);
    timer = clock.setTimer(() => {
      timer = undefined;
      writing = write().finally(() => {
        writing = undefined;
        schedule();
      });
    }, delay);
  };

  /** Moves the dirty keys into `changes` under a new sequence number. */
  const nextSeq = (): void => {
    if (dirty.size === 0) return;
    if (seq + 1 > MAX_FEED_SEQ) {
      // A wrap would let readers take new numbers for old ones: a new epoch makes them sweep.
      epoch = newEpoch();
      seq = 0;
      floor = 0;
      changes = [];
    }
    seq++;
    const keys = [...dirty];
    dirty.clear();
    const fresh = new Set(keys);
    changes = [
      ...keys.map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return { namespace, name, seq };
      }),
      ...changes.filter((e) => !fresh.has(`${e.namespace}/${e.name}`)),
    ];
    unwritten = true;
  };

  const resolveTarget = async (cluster: ClusterIdentity): Promise<CloudMapTarget | undefined> => {
    if (target !== undefined) return target;
    const ensured = await opts.resolver.ensure(
      FEED_NAMESPACE_NAME,
      feedServiceName(cluster.clustersetId),
    );
    if (ensured.state === 'ready') target = ensured.target;
    else if (ensured.state === 'unsupported') throw new Error(ensured.message);
    return target;
  };

  const write = async (): Promise<void> => {
    const cluster = opts.identity();
    if (cluster === undefined) {
      failures++; // no identity yet: look again after a backoff
      return;
    }
    nextSeq();
    const encoded = encodeFeed({
      cluster,
      epoch,
      seq,
      floor,
      updatedAtMs: opts.now(),
      changes,
    });
    // What did not fit is gone for good: the raised floor tells readers to sweep for it.
    changes = encoded.kept;
    floor = encoded.floor;
    lastWriteAt = clock.now();
    try {
      const feed = await resolveTarget(cluster);
      if (feed === undefined) {
        failures++; // the feed namespace is being created
        return;
      }
      const { instance } = encoded;
      await opts.cloudMap.registerInstance(feed.serviceId, instance.id, instance.attributes);
      if (warned) logger.info('change feed writes recovered', { seq });
      warned = false;
      failures = 0;
      unwritten = false;
      opts.onWrite?.('success');
    } catch (error) {
      failed(error);
    }
  };

  const failed = (error: unknown): void => {
    const code = isCloudMapError(error) ? error.code : undefined;
    if (code === 'ServiceNotFound' || code === 'NamespaceNotFound') target = undefined;
    const result: FeedWriteResult =
      code === 'DuplicateRequest'
        ? 'duplicate' // our previous feed write is still being applied: try again shortly
        : code !== undefined && THROTTLING.has(code)
          ? 'throttled'
          : 'error';
    opts.onWrite?.(result);
    // Cloud Map refuses a write of an instance whose previous write is still being applied:
    // not a failure, just try again after a second (no growing backoff).
    if (result === 'duplicate') {
      failures = Math.max(failures, 1);
      return;
    }
    failures++;
    // One line per failure streak, not one per retry.
    if (!warned) {
      warned = true;
      logger.warn(
        'change feed write failed; retrying with backoff (importers fall back to sweeps)',
        {
          [logFields.error]: error,
          seq,
        },
      );
    }
  };

  const mark = (namespace: string, name: string): void => {
    dirty.add(`${namespace}/${name}`);
    schedule();
  };

  return {
    changed: mark,
    hint: mark,
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    async stop() {
      running = false;
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      await writing;
    },
    get state() {
      return { epoch, seq, floor, pending: dirty.size };
    },
  };
}
