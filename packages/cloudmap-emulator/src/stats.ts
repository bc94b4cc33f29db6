import { WRITE_OPERATIONS } from './handlers/index.js';

/** Per-operation call counts, read by tests and benchmarks through the admin API. */
export interface OperationStats {
  calls: number;
  succeeded: number;
  /** Answered a modeled or protocol error (4xx other than throttling). */
  clientErrors: number;
  throttled: number;
  /** Injected 5xx, outage answers and unexpected failures. */
  serverErrors: number;
}

export interface StatsSnapshot {
  operations: Record<string, OperationStats>;
  /** Calls per caller (the access key id a call was signed with) and operation. */
  callers: Record<string, Record<string, number>>;
  /**
   * Calls that came through the gateway, per intercepted host (`data-servicediscovery...`,
   * `servicediscovery...`) and operation, refused ones included: where a client sent what.
   */
  hosts: Record<string, Record<string, number>>;
  totals: OperationStats & {
    /** Calls to read operations (Get*, List*, Discover*). */
    reads: number;
    /** Calls to write operations, whatever their outcome. */
    writes: number;
    /** Write calls that succeeded: what actually changed (or submitted a change to) state. */
    writesSucceeded: number;
  };
}

export type Outcome = 'succeeded' | 'clientErrors' | 'throttled' | 'serverErrors';

const zero = (): OperationStats => ({
  calls: 0,
  succeeded: 0,
  clientErrors: 0,
  throttled: 0,
  serverErrors: 0,
});

export class Stats {
  private ops = new Map<string, OperationStats>();
  private callers = new Map<string, Map<string, number>>();
  private hosts = new Map<string, Map<string, number>>();

  record(op: string, outcome: Outcome, caller = '(unsigned)', host?: string): void {
    const s = this.ops.get(op) ?? zero();
    s.calls += 1;
    s[outcome] += 1;
    this.ops.set(op, s);
    count(this.callers, caller, op);
    if (host !== undefined) count(this.hosts, host, op);
  }

  reset(): void {
    this.ops.clear();
    this.callers.clear();
    this.hosts.clear();
  }

  snapshot(): StatsSnapshot {
    const totals = { ...zero(), reads: 0, writes: 0, writesSucceeded: 0 };
    const operations: Record<string, OperationStats> = {};
    for (const [op, s] of [...this.ops].sort(([a], [b]) => a.localeCompare(b))) {
      operations[op] = { ...s };
      totals.calls += s.calls;
      totals.succeeded += s.succeeded;
      totals.clientErrors += s.clientErrors;
      totals.throttled += s.throttled;
      totals.serverErrors += s.serverErrors;
      if (WRITE_OPERATIONS.has(op)) {
        totals.writes += s.calls;
        totals.writesSucceeded += s.succeeded;
      } else {
        totals.reads += s.calls;
      }
    }
    return { operations, callers: sorted(this.callers), hosts: sorted(this.hosts), totals };
  }
}

function count(map: Map<string, Map<string, number>>, key: string, op: string): void {
  const byOp = map.get(key) ?? new Map<string, number>();
  byOp.set(op, (byOp.get(op) ?? 0) + 1);
  map.set(key, byOp);
}

function sorted(map: Map<string, Map<string, number>>): Record<string, Record<string, number>> {
  const byName = ([a]: [string, unknown], [b]: [string, unknown]) => a.localeCompare(b);
  return Object.fromEntries(
    [...map].sort(byName).map(([k, byOp]) => [k, Object.fromEntries([...byOp].sort(byName))]),
  );
}
