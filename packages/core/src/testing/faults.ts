import { CloudMapError, type CloudMapErrorCode } from '../ports/cloudmap-port.js';
import {
  cloudMapOperations,
  isWriteOperation,
  retryableCloudMapErrorCodes,
  type CloudMapOperationName,
} from '../ports/operations.js';

export interface FaultOptions {
  message?: string;
  /** Defaults to whether the code is throttling or transient (see `retryableCloudMapErrorCodes`). */
  retryable?: boolean;
}

/**
 * Switches that make a named operation fail the next N times (docs/contributing.md#tests, admiral's
 * failing reactor), and counters of every call made, failed or not.
 */
export interface FaultInjector {
  /** The next `times` calls of `op` throw a CloudMapError with `code` (default once). */
  failNext(
    op: CloudMapOperationName,
    code: CloudMapErrorCode,
    times?: number,
    options?: FaultOptions,
  ): void;
  /** Every call of `op` throws until `clearFaults(op)`. */
  failAlways(op: CloudMapOperationName, code: CloudMapErrorCode, options?: FaultOptions): void;
  clearFaults(op?: CloudMapOperationName): void;
}

export interface CallCounters {
  /** Calls of one operation, including those that failed. */
  calls(op: CloudMapOperationName): number;
  /** Calls of one operation that threw an injected or semantic error. */
  failures(op: CloudMapOperationName): number;
  /** Calls of write operations (create, delete, register, deregister). */
  readonly writes: number;
  readonly reads: number;
  readonly total: number;
  /** Per-operation call counts, only operations called at least once. */
  snapshot(): Partial<Record<CloudMapOperationName, number>>;
  resetCounters(): void;
}

interface ArmedFault {
  code: CloudMapErrorCode;
  remaining: number;
  options: FaultOptions;
}

/** The bookkeeping shared by the fake: `enter` counts a call and throws an armed fault. */
export interface FaultState extends FaultInjector, CallCounters {
  enter(op: CloudMapOperationName): void;
  recordFailure(op: CloudMapOperationName): void;
}

export function createFaultState(): FaultState {
  const faults = new Map<CloudMapOperationName, ArmedFault[]>();
  const calls = new Map<CloudMapOperationName, number>();
  const failures = new Map<CloudMapOperationName, number>();
  const bump = (m: Map<CloudMapOperationName, number>, op: CloudMapOperationName): void => {
    m.set(op, (m.get(op) ?? 0) + 1);
  };
  const sum = (pred: (op: CloudMapOperationName) => boolean): number =>
    cloudMapOperations.filter(pred).reduce((n, op) => n + (calls.get(op) ?? 0), 0);
  const arm = (op: CloudMapOperationName, fault: ArmedFault): void => {
    const list = faults.get(op) ?? [];
    list.push(fault);
    faults.set(op, list);
  };

  return {
    failNext(op, code, times = 1, options = {}) {
      if (times > 0) arm(op, { code, remaining: times, options });
    },
    failAlways(op, code, options = {}) {
      arm(op, { code, remaining: Infinity, options });
    },
    clearFaults(op) {
      if (op === undefined) faults.clear();
      else faults.delete(op);
    },
    enter(op) {
      bump(calls, op);
      const list = faults.get(op);
      const fault = list?.[0];
      if (list === undefined || fault === undefined) return;
      fault.remaining -= 1;
      if (fault.remaining <= 0) list.shift();
      bump(failures, op);
      throw new CloudMapError(
        fault.code,
        fault.options.message ?? `injected ${fault.code} on ${op}`,
        op,
        { retryable: fault.options.retryable ?? retryableCloudMapErrorCodes.has(fault.code) },
      );
    },
    recordFailure(op) {
      bump(failures, op);
    },
    calls: (op) => calls.get(op) ?? 0,
    failures: (op) => failures.get(op) ?? 0,
    get writes() {
      return sum(isWriteOperation);
    },
    get reads() {
      return sum((op) => !isWriteOperation(op));
    },
    get total() {
      return sum(() => true);
    },
    snapshot() {
      return Object.fromEntries(calls);
    },
    resetCounters() {
      calls.clear();
      failures.clear();
    },
  };
}
