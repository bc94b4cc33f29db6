import { randomBytes } from 'node:crypto';
import {
  encodeFeed,
  FEED_NAMESPACE_NAME,
  feedServiceName,
  isCloudMapError,
  isThrottlingCode,
  logFields,
  MAX_FEED_SEQ,
  splitKey,
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
 *   records. The reconciler's call at submission only lowers latency: the completion
 *   announces again.
 * - A new epoch per process (and when the sequence number would wrap): readers cannot know
 *   what a crashed incarnation wrote without announcing, so they sweep.
 * - Never a source of truth: a failed write is retried with backoff and logged; readers that
 *   miss it converge by their sweeps and backstops.
 */
export interface FeedWriter {
  /** Writes of service N/S were submitted or completed: announce it (coalesced). */
  changed(namespace: string, name: string): void;
  /** Writes this incarnation's first record (its epoch), then follows `changed`. */
  start(): void;
  stop(): Promise<void>;
  /** The current record's state (tests, metrics). */
  readonly state: { seq: number; failures: number };
  /**
   * The epoch and sequence number of the last record written successfully: the heartbeat
   * states them, and readers trust this cluster's record only while they agree (ADR 0018).
   * Undefined during a streak of failed writes (the record misses changes).
   */
  readonly written: { epoch: string; seq: number } | undefined;
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
  /** Defaults to random base-36 text; injected by tests. */
  newEpoch?: () => string;
  onWrite?: ((result: FeedWriteResult) => void) | undefined;
  /** After the first successful write of an epoch (the heartbeat states it at once). */
  onEpochWritten?: () => void;
}

const randomEpoch = (): string => BigInt(`0x${randomBytes(8).toString('hex')}`).toString(36);

interface FeedWriterState {
  readonly opts: FeedWriterOptions;
  epoch: string;
  seq: number;
  floor: number;
  /** What the next record lists (the codec keeps only what fits; older ones raise the floor). */
  changes: FeedEntry[];
  readonly dirty: Set<string>;
  target: CloudMapTarget | undefined;
  /** The current seq has not been written successfully (the start record included). */
  unwritten: boolean;
  /** The last record written successfully. */
  written: { epoch: string; seq: number } | undefined;
  running: boolean;
  timer: TimerHandle | undefined;
  writing: Promise<void> | undefined;
  lastWriteAt: number;
  failures: number;
  /** A failure streak was logged (its end is logged too). */
  warned: boolean;
}

export function createFeedWriter(opts: FeedWriterOptions): FeedWriter {
  const s: FeedWriterState = {
    opts,
    epoch: (opts.newEpoch ?? randomEpoch)(),
    seq: 0,
    floor: 0,
    changes: [],
    dirty: new Set(),
    target: undefined,
    unwritten: true,
    written: undefined,
    running: false,
    timer: undefined,
    writing: undefined,
    lastWriteAt: -Infinity,
    failures: 0,
    warned: false,
  };
  return {
    changed(namespace, name) {
      s.dirty.add(`${namespace}/${name}`);
      schedule(s);
    },
    start() {
      if (s.running) return;
      s.running = true;
      schedule(s);
    },
    async stop() {
      s.running = false;
      if (s.timer !== undefined) opts.clock.clearTimer(s.timer);
      s.timer = undefined;
      await s.writing;
    },
    get state() {
      return { seq: s.seq, failures: s.failures };
    },
    // None while writes fail: changes made since are missing from the record, and a
    // heartbeat stating its sequence number would keep readers trusting it (issue 31).
    get written() {
      return s.warned ? undefined : s.written;
    },
  };
}

/** Ceiling of the retry backoff after failed writes. */
const MAX_BACKOFF_MS = 30_000;

function schedule(s: FeedWriterState): void {
  if (!s.running || s.timer !== undefined || s.writing !== undefined) return;
  if (s.dirty.size === 0 && !s.unwritten) return;
  const { clock } = s.opts;
  const backoff =
    s.failures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(s.failures, 10));
  const delay = Math.max(0, s.lastWriteAt + (s.opts.minIntervalMs ?? 1000) - clock.now(), backoff);
  s.timer = clock.setTimer(() => {
    s.timer = undefined;
    s.writing = write(s).finally(() => {
      s.writing = undefined;
      schedule(s);
    });
  }, delay);
}

/** Moves the dirty keys into `changes` under a new sequence number. */
function nextSeq(s: FeedWriterState): void {
  if (s.dirty.size === 0) return;
  if (s.seq + 1 > MAX_FEED_SEQ) {
    // A wrap would let readers take new numbers for old ones: a new epoch makes them sweep.
    s.epoch = (s.opts.newEpoch ?? randomEpoch)();
    s.seq = 0;
    s.floor = 0;
    s.changes = [];
  }
  s.seq++;
  const seq = s.seq;
  const keys = [...s.dirty];
  s.dirty.clear();
  const fresh = new Set(keys);
  s.changes = [
    ...keys.map((key) => {
      const [namespace, name] = splitKey(key);
      return { namespace, name, seq };
    }),
    ...s.changes.filter((e) => !fresh.has(`${e.namespace}/${e.name}`)),
  ];
  s.unwritten = true;
}

async function resolveTarget(
  s: FeedWriterState,
  cluster: ClusterIdentity,
): Promise<CloudMapTarget | undefined> {
  if (s.target !== undefined) return s.target;
  const ensured = await s.opts.resolver.ensure(
    FEED_NAMESPACE_NAME,
    feedServiceName(cluster.clustersetId),
  );
  if (ensured.state === 'ready') s.target = ensured.target;
  else if (ensured.state === 'unsupported') throw new Error(ensured.message);
  return s.target;
}

async function write(s: FeedWriterState): Promise<void> {
  const { opts } = s;
  const cluster = opts.identity();
  if (cluster === undefined) {
    s.failures++; // no identity yet: look again after a backoff
    return;
  }
  nextSeq(s);
  const encoded = encodeFeed({
    cluster,
    epoch: s.epoch,
    seq: s.seq,
    floor: s.floor,
    updatedAtMs: opts.now(),
    changes: s.changes,
  });
  // What did not fit is gone for good: the raised floor tells readers to sweep for it.
  s.changes = encoded.kept;
  s.floor = encoded.floor;
  s.lastWriteAt = opts.clock.now();
  try {
    const feed = await resolveTarget(s, cluster);
    if (feed === undefined) {
      s.failures++; // the feed namespace is being created
      return;
    }
    const { instance } = encoded;
    const position = { epoch: s.epoch, seq: s.seq };
    await opts.cloudMap.registerInstance(feed.serviceId, instance.id, instance.attributes);
    opts.logger.debug('change feed written', {
      seq: s.seq,
      services: s.changes.map((c) => `${c.namespace}/${c.name}@${c.seq}`).join(' '),
    });
    const firstOfEpoch = s.written?.epoch !== position.epoch;
    s.written = position;
    if (firstOfEpoch) opts.onEpochWritten?.();
    if (s.warned) opts.logger.info('change feed writes recovered', { seq: s.seq });
    s.warned = false;
    s.failures = 0;
    s.unwritten = false;
    opts.onWrite?.('success');
  } catch (error) {
    failed(s, error);
  }
}

function failed(s: FeedWriterState, error: unknown): void {
  const code = isCloudMapError(error) ? error.code : undefined;
  if (code === 'ServiceNotFound' || code === 'NamespaceNotFound') {
    if (s.target !== undefined) s.opts.resolver.forget(FEED_NAMESPACE_NAME, s.target.serviceName);
    s.target = undefined;
  }
  const result: FeedWriteResult =
    code === 'DuplicateRequest'
      ? 'duplicate' // our previous feed write is still being applied: try again shortly
      : code !== undefined && isThrottlingCode(code)
        ? 'throttled'
        : 'error';
  s.opts.onWrite?.(result);
  // Cloud Map refuses a write of an instance whose previous write is still being applied:
  // not a failure, just try again after a second (no growing backoff).
  if (result === 'duplicate') {
    s.failures = Math.max(s.failures, 1);
    return;
  }
  s.failures++;
  // One line per failure streak, not one per retry.
  if (!s.warned) {
    s.warned = true;
    s.opts.logger.warn(
      'change feed write failed; retrying with backoff (the heartbeat stops vouching for the record meanwhile)',
      {
        [logFields.error]: error,
        seq: s.seq,
      },
    );
  }
}
