import type { OperationState } from '../ports/cloudmap-port.js';
import type { CloudMapOperationName } from '../ports/operations.js';
import { logFields } from '../logging/log-fields.js';
import { noopLogger, type Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../workqueue/clock.js';

/** An asynchronous Cloud Map operation the client submitted. */
export interface TrackedOperation {
  operationId: string;
  kind: Extract<
    CloudMapOperationName,
    'createHttpNamespace' | 'createPrivateDnsNamespace' | 'registerInstance' | 'deregisterInstance'
  >;
  serviceId?: string;
  instanceId?: string;
  namespaceName?: string;
}

export interface OperationResult extends TrackedOperation {
  status: 'SUCCESS' | 'FAIL' | 'TIMEOUT' | 'CANCELLED';
  errorCode?: string;
  errorMessage?: string;
  targets?: OperationState['targets'];
  durationMs: number;
}

/**
 * Polls GetOperation in the background. `track` returns at once; nobody has to await the
 * result, so a reconcile never blocks on an operation (docs/architecture.md#how-each-agent-reconciles, step 5). Completions are
 * reported to listeners (e.g. "requeue the key whose register FAILed") and to `wait`.
 */
export interface OperationTracker {
  track(op: TrackedOperation): Promise<OperationResult>;
  /** The pending result of a tracked operation, or undefined if it is not tracked. */
  wait(operationId: string): Promise<OperationResult> | undefined;
  onComplete(listener: (result: OperationResult) => void): () => void;
  readonly pending: number;
  /** Stops polling; pending operations complete as CANCELLED. */
  close(): void;
}

export interface OperationTrackerOptions {
  getOperation: (operationId: string) => Promise<OperationState>;
  clock: Clock;
  logger?: Logger;
  /** First poll after this long; doubles per poll up to `maxPollIntervalMs`. Default 500 ms. */
  initialPollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Give up (TIMEOUT) after this long; Cloud Map can take minutes. Default 5 minutes. */
  timeoutMs?: number;
  onPendingChange?: (pending: number) => void;
}

interface Pending {
  op: TrackedOperation;
  startedAt: number;
  nextPollAt: number;
  interval: number;
  polling: boolean;
  resolve: (r: OperationResult) => void;
  promise: Promise<OperationResult>;
}

export function createOperationTracker(options: OperationTrackerOptions): OperationTracker {
  const { clock } = options;
  const log = options.logger ?? noopLogger;
  const initial = options.initialPollIntervalMs ?? 500;
  const maxInterval = options.maxPollIntervalMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const pending = new Map<string, Pending>();
  const listeners = new Set<(r: OperationResult) => void>();
  let timer: TimerHandle | undefined;
  let closed = false;

  const finish = (
    p: Pending,
    result: Omit<OperationResult, keyof TrackedOperation | 'durationMs'>,
  ): void => {
    if (!pending.delete(p.op.operationId)) return;
    options.onPendingChange?.(pending.size);
    const full: OperationResult = { ...p.op, ...result, durationMs: clock.now() - p.startedAt };
    p.resolve(full);
    for (const l of listeners) {
      try {
        l(full);
      } catch (error) {
        log.error('operation listener failed', {
          [logFields.operationId]: p.op.operationId,
          [logFields.error]: error,
        });
      }
    }
  };

  const schedule = (): void => {
    if (timer !== undefined) clock.clearTimer(timer);
    timer = undefined;
    if (closed) return;
    let next = Infinity;
    for (const p of pending.values()) if (!p.polling) next = Math.min(next, p.nextPollAt);
    if (next === Infinity) return;
    timer = clock.setTimer(tick, next - clock.now());
  };

  const poll = async (p: Pending): Promise<void> => {
    p.polling = true;
    try {
      const state = await options.getOperation(p.op.operationId);
      const { operationId: _, status, ...details } = state;
      if (status === 'SUCCESS' || status === 'FAIL') {
        finish(p, { ...details, status });
        return;
      }
    } catch (error) {
      // OperationNotFound right after submit is eventual consistency; throttling is transient.
      // Either way keep polling until the timeout.
      log.debug('operation poll failed', {
        [logFields.operationId]: p.op.operationId,
        [logFields.error]: error,
      });
    } finally {
      p.polling = false;
    }
    if (!pending.has(p.op.operationId)) return;
    if (clock.now() - p.startedAt >= timeoutMs) {
      finish(p, { status: 'TIMEOUT', errorMessage: `no final status after ${timeoutMs} ms` });
      return;
    }
    p.interval = Math.min(maxInterval, p.interval * 2);
    // The last poll lands on the deadline, so a timeout is reported on time.
    p.nextPollAt = Math.min(clock.now() + p.interval, p.startedAt + timeoutMs);
  };

  function tick(): void {
    timer = undefined;
    const now = clock.now();
    const due = [...pending.values()].filter((p) => !p.polling && p.nextPollAt <= now);
    for (const p of due) void poll(p).finally(schedule);
    schedule();
  }

  return {
    track(op) {
      const existing = pending.get(op.operationId);
      if (existing !== undefined) return existing.promise;
      const { promise, resolve } = Promise.withResolvers<OperationResult>();
      const now = clock.now();
      const p: Pending = {
        op,
        startedAt: now,
        nextPollAt: now + initial,
        interval: initial,
        polling: false,
        resolve,
        promise,
      };
      if (closed) {
        resolve({ ...op, status: 'CANCELLED', durationMs: 0 });
        return promise;
      }
      pending.set(op.operationId, p);
      options.onPendingChange?.(pending.size);
      schedule();
      return promise;
    },
    wait: (id) => pending.get(id)?.promise,
    onComplete(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    get pending() {
      return pending.size;
    },
    close() {
      closed = true;
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      for (const p of [...pending.values()]) finish(p, { status: 'CANCELLED' });
    },
  };
}
