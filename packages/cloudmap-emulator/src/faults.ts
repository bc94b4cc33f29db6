/**
 * Fault injection, configured through the admin API. Shares are probabilities in [0, 1];
 * `next` counts make a fault deterministic ("the next 2 calls"), which is what tests want.
 * Counts are consumed as calls arrive, so reading the config back shows what is left.
 */
export interface FaultShare {
  /** Probability in [0, 1] that a call gets the fault. */
  share?: number;
  /** The next N calls get the fault, before `share` applies. */
  next?: number;
}

export interface OperationFault {
  /** Answer ThrottlingException (RequestLimitExceeded on the data plane). */
  throttle?: FaultShare;
  /** Answer a server error: 500 InternalFailure (default) or 503 ServiceUnavailable. */
  error?: FaultShare & { status?: 500 | 503 };
  /** Added before the call is handled. */
  latencyMs?: number;
  /** Asynchronous operations submitted by this call end in FAIL (ErrorCode INTERNAL_FAILURE). */
  failOperation?: FaultShare;
}

export interface RateLimit {
  ratePerSecond: number;
  burst: number;
  /**
   * Calls per second the rest of the account spends from the same quota, its burst already
   * spent: a test's stand-in for the other users of an account (the quota is per account), so
   * the bucket keeps AWS's figures and the callers under test get what the others leave.
   */
  otherUsersPerSecond?: number;
}

export interface FaultConfig {
  /** Full outage: `unavailable` answers 503 to everything, `reset` drops connections. */
  outage?: 'unavailable' | 'reset' | null | undefined;
  /** Keyed by operation name, or `*` for every operation. */
  operations?: Record<string, OperationFault>;
  /** Token buckets per operation; exceeding one throttles like the real service. */
  rateLimits?: Record<string, RateLimit>;
  /** Makes `share` decisions reproducible: the same seed and calls give the same faults. */
  seed?: number;
}

/** mulberry32: a tiny, well-distributed 32-bit PRNG, enough for fault shares. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cloud Map's documented account-wide data-plane quotas (throttling page, quotas page). */
export const AWS_RATE_LIMITS: Readonly<Record<string, RateLimit>> = {
  DiscoverInstances: { ratePerSecond: 1000, burst: 2000 },
  DiscoverInstancesRevision: { ratePerSecond: 3000, burst: 3000 },
};

interface Bucket {
  tokens: number;
  at: number;
}

export class Faults {
  config: FaultConfig = {};
  private buckets = new Map<string, Bucket>();
  private random: () => number = Math.random;

  constructor(private readonly now: () => number = Date.now) {
    this.clear();
  }

  clear(): void {
    this.config = { rateLimits: { ...AWS_RATE_LIMITS } };
    this.reseed();
  }

  replace(config: FaultConfig): void {
    this.config = structuredClone(config);
    this.reseed();
  }

  private reseed(): void {
    this.buckets.clear();
    this.random = this.config.seed === undefined ? Math.random : seededRandom(this.config.seed);
  }

  merge(patch: FaultConfig): void {
    const ops = { ...this.config.operations };
    for (const [name, fault] of Object.entries(patch.operations ?? {}))
      ops[name] = { ...ops[name], ...fault };
    this.config = {
      ...this.config,
      // JSON has no undefined: `"outage": null` in a patch is how an outage is lifted.
      ...('outage' in patch ? { outage: patch.outage ?? undefined } : {}),
      operations: ops,
      rateLimits: { ...this.config.rateLimits, ...patch.rateLimits },
      ...(patch.seed !== undefined ? { seed: patch.seed } : {}),
    };
    this.reseed();
  }

  private faultsFor(op: string): OperationFault[] {
    const ops = this.config.operations ?? {};
    return [ops[op], ops['*']].filter((f): f is OperationFault => f !== undefined);
  }

  private take(share: FaultShare | undefined): boolean {
    if (!share) return false;
    if (share.next !== undefined && share.next > 0) {
      share.next -= 1;
      return true;
    }
    return share.share !== undefined && share.share > 0 && this.random() < share.share;
  }

  latencyMs(op: string): number {
    return this.faultsFor(op).reduce((sum, f) => sum + (f.latencyMs ?? 0), 0);
  }

  /** True when the call is throttled, by injection or by its token bucket. */
  throttled(op: string): boolean {
    if (this.faultsFor(op).some((f) => this.take(f.throttle))) return true;
    const limit = this.config.rateLimits?.[op];
    if (!limit) return false;
    const now = this.now();
    const others = Math.min(limit.otherUsersPerSecond ?? 0, limit.ratePerSecond);
    const bucket = this.buckets.get(op) ?? { tokens: others > 0 ? 0 : limit.burst, at: now };
    bucket.tokens = Math.min(
      limit.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * (limit.ratePerSecond - others),
    );
    bucket.at = now;
    this.buckets.set(op, bucket);
    if (bucket.tokens < 1) return true;
    bucket.tokens -= 1;
    return false;
  }

  /** The status of an injected server error for this call, if any. */
  serverError(op: string): number | undefined {
    for (const f of this.faultsFor(op)) if (this.take(f.error)) return f.error?.status ?? 500;
    return undefined;
  }

  failOperation(op: string): boolean {
    return this.faultsFor(op).some((f) => this.take(f.failOperation));
  }
}
