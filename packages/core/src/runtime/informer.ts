import type { KubernetesObject } from '@kubernetes/client-node';
import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';
import { realClock, type Clock, type TimerHandle } from '../workqueue/clock.js';
import { fullJitterDelay, untilAborted, type BackoffPolicy } from '../workqueue/backoff.js';
import type { EventSource, WatchEvent } from '../workqueue/watches.js';

/** The part of client-node's `Informer & ObjectCache` we use; tests pass a fake. */
export interface InformerLike<T extends KubernetesObject> {
  on(verb: 'add' | 'update' | 'delete' | 'change', cb: (obj: T) => void): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- client-node's ErrorCallback
  on(verb: 'error' | 'connect', cb: (err?: any) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): readonly T[];
}

export type InformerEvent = WatchEvent;

export interface SupervisedInformerOptions<T extends KubernetesObject> {
  /** For logs and metrics, e.g. `serviceexports`. */
  name: string;
  /**
   * Builds the underlying informer once; its cache survives restarts (deletes are seen on
   * relist). `listed` is called when a list completes; `alive` whenever the watch shows it is
   * open without delivering an object (a BOOKMARK), so the watchdog does not restart it.
   */
  create: (listed: () => void, alive: () => void) => InformerLike<T>;
  /**
   * Must only enqueue (docs/contributing.md#reconcile-shape); a throw is logged and swallowed.
   * Absent: a cache whose handlers are added with `on` (an agent's watches table).
   */
  onEvent?: (event: InformerEvent, obj: T) => void;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Restart delay after an error (full jitter). Default 1 s doubling to 60 s. */
  backoff?: BackoffPolicy;
  /**
   * Restart if nothing (no event, no bookmark, no reconnect) was seen for this long. Our
   * watches ask the server for bookmarks and to end them within minutes (kube-informer.ts),
   * so silence for longer means a dead informer (client-node #364, #596, #958, #1496).
   * Default 5 minutes; 0 disables.
   */
  watchdogMs?: number;
}

export interface SupervisedInformer<T extends KubernetesObject> extends EventSource<T> {
  readonly name: string;
  start(): void;
  /** True once a list has completed and the cache holds it. */
  hasSynced(): boolean;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): readonly T[];
  stop(): Promise<void>;
  readonly restarts: number;
  /** Resolves at the first sync (or at once if synced). */
  synced(): Promise<void>;
}

/**
 * Keeps a client-node informer running: client-node stops an informer for good on any error
 * other than 410 (docs/architecture.md#client-node-gaps), so this restarts it with jittered backoff, restarts
 * it when it goes silent, and reports sync once the first list is in the cache.
 */
export function superviseInformer<T extends KubernetesObject>(
  options: SupervisedInformerOptions<T>,
): SupervisedInformer<T> {
  const clock = options.clock ?? realClock;
  const backoff = options.backoff ?? { baseDelayMs: 1_000, maxDelayMs: 60_000 };
  const watchdogMs = options.watchdogMs ?? 5 * 60_000;
  const log = options.logger.child({ [logFields.resource]: options.name });
  let listed = false;
  let synced = false;
  let running = false;
  let starting = false;
  let failures = 0;
  let restarts = 0;
  let lastActivity = clock.now();
  let restartTimer: TimerHandle | undefined;
  let watchdogTimer: TimerHandle | undefined;
  let resolveSynced!: () => void;
  const syncedPromise = new Promise<void>((r) => (resolveSynced = r));

  const activity = (): void => {
    lastActivity = clock.now();
  };
  const informer = options.create(() => {
    listed = true;
  }, activity);
  const handlers = new Set<(event: InformerEvent, obj: T) => void>();
  if (options.onEvent !== undefined) handlers.add(options.onEvent);
  const deliver = (event: InformerEvent) => (obj: T) => {
    activity();
    failures = 0;
    for (const handler of handlers) {
      try {
        handler(event, obj);
      } catch (error) {
        log.error('informer handler failed', { [logFields.error]: error });
      }
    }
  };
  for (const event of ['add', 'update', 'delete'] as const) informer.on(event, deliver(event));
  informer.on('connect', activity);
  informer.on('error', (err) => {
    // Our own stop() aborts the watch; that AbortError is not a failure.
    if (!running || (err instanceof Error && err.name === 'AbortError')) return;
    failures += 1;
    scheduleRestart('error', err);
  });

  const run = async (): Promise<void> => {
    if (!running || starting) return;
    starting = true;
    listed = false;
    activity();
    try {
      await informer.start();
    } catch (error) {
      failures += 1;
      scheduleRestart('error', error);
    } finally {
      starting = false;
    }
    if (listed && !synced && running) {
      synced = true;
      failures = 0;
      log.info('informer synced', { count: informer.list().length });
      resolveSynced();
    }
  };

  function scheduleRestart(reason: 'error' | 'watchdog', err?: unknown): void {
    if (!running || restartTimer !== undefined) return;
    const delay = reason === 'watchdog' ? 0 : fullJitterDelay(failures, backoff, options.random);
    log.warn('informer restarting', {
      [logFields.reason]: reason,
      [logFields.delayMs]: delay,
      [logFields.error]: err,
    });
    restartTimer = clock.setTimer(() => {
      restartTimer = undefined;
      restarts += 1;
      void informer.stop().then(run);
    }, delay);
  }

  const armWatchdog = (): void => {
    if (watchdogMs <= 0 || !running) return;
    watchdogTimer = clock.setTimer(
      () => {
        watchdogTimer = undefined;
        if (running && !starting && clock.now() - lastActivity >= watchdogMs) {
          activity();
          scheduleRestart('watchdog');
        }
        armWatchdog();
      },
      Math.max(1_000, watchdogMs / 4),
    );
  };

  return {
    name: options.name,
    start() {
      if (running) return;
      running = true;
      armWatchdog();
      void run();
    },
    on(handler) {
      handlers.add(handler);
      return () => void handlers.delete(handler);
    },
    hasSynced: () => synced,
    get: (name, namespace) => informer.get(name, namespace),
    list: (namespace) => informer.list(namespace),
    async stop() {
      running = false;
      if (restartTimer !== undefined) clock.clearTimer(restartTimer);
      if (watchdogTimer !== undefined) clock.clearTimer(watchdogTimer);
      restartTimer = watchdogTimer = undefined;
      await informer.stop();
    },
    get restarts() {
      return restarts;
    },
    synced: () => syncedPromise,
  };
}

/** Thrown by `waitForCacheSync` when the wait is aborted (shutdown before sync). */
export class CacheSyncAbortedError extends Error {
  override readonly name = 'CacheSyncAbortedError';
}

/** Resolves when every informer has synced (start workers only then, docs/contributing.md#reconcile-shape). */
export async function waitForCacheSync(
  informers: readonly Pick<SupervisedInformer<KubernetesObject>, 'synced' | 'name' | 'hasSynced'>[],
  signal?: AbortSignal,
): Promise<void> {
  const all = Promise.all(informers.map((i) => i.synced()));
  if (signal === undefined) return all.then(() => undefined);
  await untilAborted(all, signal, () => {
    const pending = informers.filter((i) => !i.hasSynced()).map((i) => i.name);
    return new CacheSyncAbortedError(`aborted before caches synced: ${pending.join(', ')}`, {
      cause: signal.reason,
    });
  });
}
