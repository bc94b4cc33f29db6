import { randomUUID } from 'node:crypto';
import type { CloudMapPort, OperationRef } from '../ports/cloudmap-port.js';
import type { CloudMapOperationName } from '../ports/operations.js';
import { noopLogger, type Logger } from '../logging/logger.js';
import { realClock, type Clock } from '../workqueue/clock.js';
import {
  createCaller,
  defaultRetryPolicy,
  type Caller,
  type PortCall,
  type RetryPolicy,
} from './calls.js';
import { noopCloudMapMetrics, type CloudMapMetrics } from './metrics.js';
import {
  createOperationTracker,
  type OperationTracker,
  type OperationTrackerOptions,
  type TrackedOperation,
} from './operation-tracker.js';
import type { OperationLimiter, RateLimit } from './rate-limits.js';
import {
  createReadCaches,
  defaultCacheTtls,
  discoverKey,
  type CacheTtls,
  type ReadCaches,
} from './read-caches.js';
import { createTokenBucketLimiter } from './token-bucket.js';

export { defaultRetryPolicy, type RetryPolicy } from './calls.js';
export { defaultCacheTtls, type CacheTtls } from './read-caches.js';

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
 * The one Cloud Map client both agents use (docs/contributing.md#pure-core): the port plus per-operation rate
 * limits, retries with full jitter on throttling/5xx, read caches evicted on write, and
 * background tracking of asynchronous operations. It is itself a CloudMapPort, so code above
 * it is tested with the fake port underneath.
 */
export interface CloudMapClient extends CloudMapPort {
  readonly operations: OperationTracker;
  /**
   * Drops the cached DiscoverInstances reads of one service: someone said it changed (the
   * change feed, ADR 0018) and the next read must not be an older cached one.
   */
  invalidateDiscover(namespaceName: string, serviceName: string): void;
  /** Stops tracking, aborts retry waits and drops queued calls. */
  close(): Promise<void>;
}

/**
 * Wires the client: a caller (limits, retries, metrics), the read caches, the operation
 * tracker, and the port's operations as reads (cached) and writes (evicting, tracked).
 */
export function createCloudMapClient(
  port: CloudMapPort,
  options: CloudMapClientOptions = {},
): CloudMapClient {
  const clock = options.clock ?? realClock;
  const log = options.logger ?? noopLogger;
  const metrics = options.metrics ?? noopCloudMapMetrics;
  const limiter = options.limiter ?? createTokenBucketLimiter(options.rateLimits, clock);
  const closing = new AbortController();
  const caches = createReadCaches({
    ttl: { ...defaultCacheTtls, ...options.cacheTtlMs },
    clock,
    metrics,
  });
  const limitedCaller = createCaller({
    limiter,
    metrics,
    retry: { ...defaultRetryPolicy, ...options.retry },
    clock,
    random: options.random ?? Math.random,
    log,
    signal: closing.signal,
  });
  // Every call, read or write, drops what expired from the read caches (at most once a TTL):
  // an agent that only writes at idle (heartbeats) would otherwise keep its last reads.
  const caller: Caller = {
    attempt: (op, fn) => (caches.sweepExpired(), limitedCaller.attempt(op, fn)),
    call: (op, fn) => (caches.sweepExpired(), limitedCaller.call(op, fn)),
  };
  const tracker = createOperationTracker({
    ...options.operations,
    clock,
    logger: log,
    getOperation: (id) =>
      caller.attempt('getOperation', (signal) => port.getOperation(id, { signal })),
    onPendingChange: (n) => metrics.operationsPending(n),
  });
  tracker.onComplete((r) => {
    metrics.operationCompleted(r.kind, r.status, r.durationMs / 1000);
    // The change becomes visible when the operation ends; drop what was read meanwhile.
    if (r.kind === 'createHttpNamespace' || r.kind === 'createPrivateDnsNamespace')
      caches.namespaces.clear();
    if (r.serviceId !== undefined) caches.evictService(r.serviceId);
  });
  const track = (ref: OperationRef, op: Omit<TrackedOperation, 'operationId'>): OperationRef => {
    void tracker.track({ operationId: ref.operationId, ...op });
    return ref;
  };
  return {
    operations: tracker,
    ...cachedReads(port, caller, caches),
    ...evictingWrites(port, caller, caches, track),
    getOperation: (id) =>
      caller.call('getOperation', (signal) => port.getOperation(id, { signal })),
    invalidateDiscover: (ns, svc) => caches.forgetDiscover(ns, svc),
    async close() {
      closing.abort();
      tracker.close();
      await limiter.stop();
    },
  };
}

type Reads =
  | 'listNamespaces'
  | 'listServices'
  | 'listInstances'
  | 'discoverInstances'
  | 'discoverInstancesRevision';

/** Reads through the caches; the revision check is never cached (it is the cheap change check). */
function cachedReads(port: CloudMapPort, c: Caller, caches: ReadCaches): Pick<CloudMapPort, Reads> {
  return {
    listNamespaces: () =>
      caches.namespaces.get('', async () => {
        const list = await c.call('listNamespaces', (signal) => port.listNamespaces({ signal }));
        caches.learnNamespaces(list);
        return list;
      }),
    listServices: (namespaceId) =>
      caches.services.get(namespaceId, async () => {
        const list = await c.call('listServices', (signal) =>
          port.listServices(namespaceId, { signal }),
        );
        for (const s of list) caches.learnService(s);
        return list;
      }),
    listInstances: (serviceId) =>
      caches.instances.get(serviceId, () =>
        c.call('listInstances', (signal) => port.listInstances(serviceId, { signal })),
      ),
    discoverInstances: (ns, svc, query) =>
      caches.discover.get(discoverKey(ns, svc, query), async () => {
        const result = await c.call('discoverInstances', (signal) =>
          port.discoverInstances(ns, svc, query, { signal }),
        );
        caches.readAt(ns, svc, result.revision);
        return result;
      }),
    discoverInstancesRevision: async (ns, svc) => {
      const revision = await c.call('discoverInstancesRevision', (signal) =>
        port.discoverInstancesRevision(ns, svc, { signal }),
      );
      caches.revisionSeen(ns, svc, revision);
      return revision;
    },
  };
}

type Writes = Exclude<keyof CloudMapPort, Reads | 'getOperation'>;

/**
 * Writes evict what they change before and after the call (a read in flight meanwhile is
 * returned but not kept); asynchronous ones are tracked. A generated creator request ID makes
 * a retried create idempotent.
 */
function evictingWrites(
  port: CloudMapPort,
  c: Caller,
  caches: ReadCaches,
  track: (ref: OperationRef, op: Omit<TrackedOperation, 'operationId'>) => OperationRef,
): Pick<CloudMapPort, Writes> {
  const around = async <T>(evict: () => void, op: CloudMapOperationName, fn: PortCall<T>) => {
    evict();
    try {
      return await c.call(op, fn);
    } finally {
      evict();
    }
  };
  const namespaces = () => caches.namespaces.clear();
  return {
    createHttpNamespace: async (name, tags, creatorRequestId = randomUUID()) => {
      const ref = await around(namespaces, 'createHttpNamespace', (signal) =>
        port.createHttpNamespace(name, tags, creatorRequestId, { signal }),
      );
      return track(ref, { kind: 'createHttpNamespace', namespaceName: name });
    },
    createPrivateDnsNamespace: async (name, vpc, tags, creatorRequestId = randomUUID()) => {
      const ref = await around(namespaces, 'createPrivateDnsNamespace', (signal) =>
        port.createPrivateDnsNamespace(name, vpc, tags, creatorRequestId, { signal }),
      );
      return track(ref, { kind: 'createPrivateDnsNamespace', namespaceName: name });
    },
    createService: async (namespaceId, name, tags, creatorRequestId = randomUUID(), spec) => {
      const svc = await around(
        () => caches.services.evict(namespaceId),
        'createService',
        (signal) => port.createService(namespaceId, name, tags, creatorRequestId, spec, { signal }),
      );
      caches.learnService(svc);
      return svc;
    },
    deleteService: async (serviceId) => {
      const namespaceId = caches.namespaceOf(serviceId);
      const evict = (): void => {
        if (namespaceId === undefined) caches.services.clear();
        else caches.services.evict(namespaceId);
        caches.evictService(serviceId);
      };
      await around(evict, 'deleteService', (signal) => port.deleteService(serviceId, { signal }));
    },
    registerInstance: async (serviceId, instanceId, attributes) => {
      const ref = await around(
        () => caches.evictService(serviceId),
        'registerInstance',
        (signal) => port.registerInstance(serviceId, instanceId, attributes, { signal }),
      );
      return track(ref, { kind: 'registerInstance', serviceId, instanceId });
    },
    deregisterInstance: async (serviceId, instanceId) => {
      const ref = await around(
        () => caches.evictService(serviceId),
        'deregisterInstance',
        (signal) => port.deregisterInstance(serviceId, instanceId, { signal }),
      );
      return track(ref, { kind: 'deregisterInstance', serviceId, instanceId });
    },
  };
}
