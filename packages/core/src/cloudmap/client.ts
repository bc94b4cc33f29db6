import { randomUUID } from 'node:crypto';
import type { CloudMapError, CloudMapPort, OperationRef } from '../ports/cloudmap-port.js';
import { isThrottlingCode, type CloudMapOperationName } from '../ports/operations.js';
import { logFields } from '../logging/log-fields.js';
import { noopLogger, type Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import { fullJitterDelay, sleep } from '../workqueue/backoff.js';
import { createReadCache } from './cache.js';
import { noopCloudMapMetrics, type CloudMapMetrics } from './metrics.js';
import {
  createOperationTracker,
  type OperationTracker,
  type OperationTrackerOptions,
  type TrackedOperation,
} from './operation-tracker.js';
import type { OperationLimiter, RateLimit } from './rate-limits.js';
import { createTokenBucketLimiter } from './token-bucket.js';
import { toCloudMapError } from './sdk-errors.js';

export interface RetryPolicy {
  /** Attempts per call including the first. Default 6. */
  maxAttempts: number;
  /** Full-jitter base for transient errors (5xx, network). Default 100 ms. */
  baseDelayMs: number;
  /** Full-jitter base after a throttle: back off harder. Default 500 ms. */
  throttleBaseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 100,
  throttleBaseDelayMs: 500,
  maxDelayMs: 20_000,
};

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

export interface CloudMapClientOptions {
  clock?: Clock;
  /** [0, 1) source for jitter; injected so tests can pin it. */
  random?: () => number;
  logger?: Logger;
  metrics?: CloudMapMetrics;
  /**
   * Per-operation limits over `defaultRateLimits` for the default token-bucket limiter;
   * ignored when `limiter` is given (tests pass `unlimited` from `@cloudmap-mcs/core/testing`).
   */
  rateLimits?: Partial<Record<CloudMapOperationName, RateLimit>>;
  limiter?: OperationLimiter;
  retry?: Partial<RetryPolicy>;
  cacheTtlMs?: Partial<CacheTtls>;
  operations?: Pick<
    OperationTrackerOptions,
    'initialPollIntervalMs' | 'maxPollIntervalMs' | 'timeoutMs'
  >;
}

/**
 * The one Cloud Map client both agents use (GUIDE.md rule 6): the port plus per-operation rate
 * limits, retries with full jitter on throttling/5xx, read caches evicted on write, and
 * background tracking of asynchronous operations. It is itself a CloudMapPort, so code above
 * it is tested with the fake port underneath.
 */
export interface CloudMapClient extends CloudMapPort {
  readonly operations: OperationTracker;
  /** Drops every cached read (e.g. on a full resync). */
  invalidateAll(): void;
  /** Stops tracking, aborts retry waits and drops queued calls. */
  close(): Promise<void>;
}

const discoverKey = (ns: string, svc: string, q?: Record<string, string>): string =>
  `${ns}\0${svc}\0${q === undefined ? '' : JSON.stringify(Object.entries(q).sort())}`;

export function createCloudMapClient(
  port: CloudMapPort,
  options: CloudMapClientOptions = {},
): CloudMapClient {
  const clock = options.clock ?? realClock;
  const random = options.random ?? Math.random;
  const log = options.logger ?? noopLogger;
  const metrics = options.metrics ?? noopCloudMapMetrics;
  const limiter = options.limiter ?? createTokenBucketLimiter(options.rateLimits, clock);
  const retry = { ...defaultRetryPolicy, ...options.retry };
  const ttl = { ...defaultCacheTtls, ...options.cacheTtlMs };
  const closing = new AbortController();

  const cache = <V>(name: keyof CacheTtls) =>
    createReadCache<V>({ name, ttlMs: ttl[name], clock, onLookup: (r) => metrics.cache(name, r) });
  const namespaces = cache<Awaited<ReturnType<CloudMapPort['listNamespaces']>>>('namespaces');
  const services = cache<Awaited<ReturnType<CloudMapPort['listServices']>>>('services');
  const instances = cache<Awaited<ReturnType<CloudMapPort['listInstances']>>>('instances');
  const discover = cache<Awaited<ReturnType<CloudMapPort['discoverInstances']>>>('discover');
  // What eviction needs to find a service's discover entries from its ID.
  const nsNames = new Map<string, string>();
  const svcInfo = new Map<string, { namespaceId: string; name: string }>();
  const revisions = new Map<string, number>();

  const attempt = <T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> =>
    limiter.schedule(op, async () => {
      const started = performance.now();
      try {
        const result = await fn();
        metrics.call(op, 'success', (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        const e = toCloudMapError(error, op);
        metrics.call(op, e.code, (performance.now() - started) / 1000);
        if (isThrottlingCode(e.code)) metrics.throttled(op);
        throw e;
      }
    });

  const call = async <T>(op: CloudMapOperationName, fn: () => Promise<T>): Promise<T> => {
    for (let n = 1; ; n++) {
      try {
        return await attempt(op, fn);
      } catch (error) {
        const e = error as CloudMapError;
        if (!e.retryable || n >= retry.maxAttempts || closing.signal.aborted) throw e;
        const base = isThrottlingCode(e.code) ? retry.throttleBaseDelayMs : retry.baseDelayMs;
        const delay = fullJitterDelay(
          n,
          { baseDelayMs: base, maxDelayMs: retry.maxDelayMs },
          random,
        );
        metrics.retry(op);
        log.debug('cloud map call retried', {
          [logFields.cloudMapOperation]: op,
          [logFields.attempt]: n,
          [logFields.delayMs]: delay,
          [logFields.error]: e,
        });
        await sleep(clock, delay, closing.signal).catch(() => {
          throw e;
        });
      }
    }
  };

  const evictService = (serviceId: string): void => {
    instances.evict(serviceId);
    const info = svcInfo.get(serviceId);
    const nsName = info === undefined ? undefined : nsNames.get(info.namespaceId);
    if (info === undefined || nsName === undefined) {
      discover.clear();
      return;
    }
    const prefix = discoverKey(nsName, info.name).slice(0, -1);
    discover.evictWhere((k) => k.startsWith(prefix));
  };

  const tracker = createOperationTracker({
    ...options.operations,
    clock,
    logger: log,
    getOperation: (id) => attempt('getOperation', () => port.getOperation(id)),
    onPendingChange: (n) => metrics.operationsPending(n),
  });
  tracker.onComplete((r) => {
    metrics.operationCompleted(r.kind, r.status, r.durationMs / 1000);
    // The change becomes visible when the operation ends; drop what was read meanwhile.
    if (r.kind === 'createHttpNamespace' || r.kind === 'createPrivateDnsNamespace')
      namespaces.clear();
    if (r.serviceId !== undefined) evictService(r.serviceId);
  });
  const track = (ref: OperationRef, op: Omit<TrackedOperation, 'operationId'>): OperationRef => {
    void tracker.track({ operationId: ref.operationId, ...op });
    return ref;
  };

  return {
    operations: tracker,
    listNamespaces: () =>
      namespaces.get('', async () => {
        const list = await call('listNamespaces', () => port.listNamespaces());
        for (const ns of list) nsNames.set(ns.id, ns.name);
        return list;
      }),
    createHttpNamespace: async (name, tags, creatorRequestId = randomUUID()) => {
      namespaces.clear();
      const ref = await call('createHttpNamespace', () =>
        port.createHttpNamespace(name, tags, creatorRequestId),
      );
      namespaces.clear();
      return track(ref, { kind: 'createHttpNamespace', namespaceName: name });
    },
    createPrivateDnsNamespace: async (name, vpc, tags, creatorRequestId = randomUUID()) => {
      namespaces.clear();
      const ref = await call('createPrivateDnsNamespace', () =>
        port.createPrivateDnsNamespace(name, vpc, tags, creatorRequestId),
      );
      namespaces.clear();
      return track(ref, { kind: 'createPrivateDnsNamespace', namespaceName: name });
    },
    listServices: (namespaceId) =>
      services.get(namespaceId, async () => {
        const list = await call('listServices', () => port.listServices(namespaceId));
        for (const s of list) svcInfo.set(s.id, { namespaceId: s.namespaceId, name: s.name });
        return list;
      }),
    // A generated creator request ID makes a retried create idempotent.
    createService: async (namespaceId, name, tags, creatorRequestId = randomUUID(), spec) => {
      services.evict(namespaceId);
      const svc = await call('createService', () =>
        port.createService(namespaceId, name, tags, creatorRequestId, spec),
      );
      svcInfo.set(svc.id, { namespaceId: svc.namespaceId, name: svc.name });
      services.evict(namespaceId);
      return svc;
    },
    deleteService: async (serviceId) => {
      const info = svcInfo.get(serviceId);
      const evict = (): void => {
        if (info === undefined) services.clear();
        else services.evict(info.namespaceId);
        evictService(serviceId);
      };
      evict();
      try {
        await call('deleteService', () => port.deleteService(serviceId));
      } finally {
        evict();
      }
    },
    listInstances: (serviceId) =>
      instances.get(serviceId, () => call('listInstances', () => port.listInstances(serviceId))),
    discoverInstances: (ns, svc, query) =>
      discover.get(discoverKey(ns, svc, query), async () => {
        const result = await call('discoverInstances', () =>
          port.discoverInstances(ns, svc, query),
        );
        revisions.set(discoverKey(ns, svc), result.revision);
        return result;
      }),
    discoverInstancesRevision: async (ns, svc) => {
      const revision = await call('discoverInstancesRevision', () =>
        port.discoverInstancesRevision(ns, svc),
      );
      const key = discoverKey(ns, svc);
      const known = revisions.get(key);
      if (known !== undefined && known !== revision) {
        revisions.delete(key);
        discover.evictWhere((k) => k.startsWith(key.slice(0, -1)));
      }
      return revision;
    },
    registerInstance: async (serviceId, instanceId, attributes) => {
      evictService(serviceId);
      try {
        const ref = await call('registerInstance', () =>
          port.registerInstance(serviceId, instanceId, attributes),
        );
        return track(ref, { kind: 'registerInstance', serviceId, instanceId });
      } finally {
        evictService(serviceId);
      }
    },
    deregisterInstance: async (serviceId, instanceId) => {
      evictService(serviceId);
      try {
        const ref = await call('deregisterInstance', () =>
          port.deregisterInstance(serviceId, instanceId),
        );
        return track(ref, { kind: 'deregisterInstance', serviceId, instanceId });
      } finally {
        evictService(serviceId);
      }
    },
    getOperation: (id) => call('getOperation', () => port.getOperation(id)),
    invalidateAll() {
      for (const c of [namespaces, services, instances, discover]) c.clear();
    },
    async close() {
      closing.abort();
      tracker.close();
      await limiter.stop();
    },
  };
}
