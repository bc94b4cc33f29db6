import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CloudMapOperationName } from '../ports/operations.js';

/** What the Cloud Map client reports (docs/architecture.md#configuration: calls by operation and outcome, throttles). */
export interface CloudMapMetrics {
  /** One attempt finished; `outcome` is 'success' or the CloudMapErrorCode. */
  call(op: CloudMapOperationName, outcome: string, seconds: number): void;
  throttled(op: CloudMapOperationName): void;
  retry(op: CloudMapOperationName): void;
  cache(cache: string, result: 'hit' | 'miss' | 'shared'): void;
  operationCompleted(kind: string, status: string, seconds: number): void;
  operationsPending(n: number): void;
}

export const noopCloudMapMetrics: CloudMapMetrics = {
  call: () => {},
  throttled: () => {},
  retry: () => {},
  cache: () => {},
  operationCompleted: () => {},
  operationsPending: () => {},
};

/** prom-client metrics in `registry` (the agent's one registry, served on /metrics). */
export function createCloudMapMetrics(registry: Registry): CloudMapMetrics {
  const registers = [registry];
  const calls = new Counter({
    name: 'mcs_cloudmap_calls_total',
    help: 'Cloud Map API calls (each attempt) by operation and outcome (success or error code).',
    labelNames: ['operation', 'outcome'],
    registers,
  });
  const duration = new Histogram({
    name: 'mcs_cloudmap_call_duration_seconds',
    help: 'Cloud Map API call latency by operation, excluding rate-limit waits.',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const throttles = new Counter({
    name: 'mcs_cloudmap_throttles_total',
    help: 'Cloud Map calls answered with ThrottlingException or RequestLimitExceeded.',
    labelNames: ['operation'],
    registers,
  });
  const retries = new Counter({
    name: 'mcs_cloudmap_retries_total',
    help: 'Cloud Map calls retried after a retryable error.',
    labelNames: ['operation'],
    registers,
  });
  const cacheRequests = new Counter({
    name: 'mcs_cloudmap_cache_requests_total',
    help: 'Cloud Map client cache lookups by cache and result (hit, miss, shared in-flight).',
    labelNames: ['cache', 'result'],
    registers,
  });
  const operations = new Histogram({
    name: 'mcs_cloudmap_operation_duration_seconds',
    help: 'Time from submitting an asynchronous Cloud Map operation to its final status.',
    labelNames: ['kind', 'status'],
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const pending = new Gauge({
    name: 'mcs_cloudmap_operations_pending',
    help: 'Asynchronous Cloud Map operations being tracked.',
    registers,
  });
  return {
    call(op, outcome, seconds) {
      calls.inc({ operation: op, outcome });
      duration.observe({ operation: op }, seconds);
    },
    throttled: (op) => throttles.inc({ operation: op }),
    retry: (op) => retries.inc({ operation: op }),
    cache: (cache, result) => cacheRequests.inc({ cache, result }),
    operationCompleted: (kind, status, seconds) => operations.observe({ kind, status }, seconds),
    operationsPending: (n) => pending.set(n),
  };
}
