import { ADMIN_PREFIX, type EmulatorConfig, type EmulatorConfigPatch } from './admin-types.js';
import type { FaultConfig, FaultShare, OperationFault } from './faults.js';
import type { EmulatorState } from './model.js';
import type { StatsSnapshot } from './stats.js';

export class EmulatorAdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'EmulatorAdminError';
  }
}

/**
 * Typed client for the admin API, for tests and benchmarks:
 * `await emu.admin.throttle('ListServices', { next: 2 })`, `(await emu.admin.stats()).totals.writes`.
 */
export class EmulatorAdminClient {
  constructor(readonly baseUrl: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${ADMIN_PREFIX}${path}`, {
      method,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
        : {}),
    });
    const parsed = (await res.json()) as T & { error?: string };
    if (!res.ok)
      throw new EmulatorAdminError(res.status, parsed.error ?? `admin call failed: ${res.status}`);
    return parsed;
  }

  health(): Promise<{ status: string }> {
    return this.call('GET', '/health');
  }

  /** Call counts per operation, plus totals with reads and writes. */
  stats(): Promise<StatsSnapshot> {
    return this.call('GET', '/stats');
  }

  resetStats(): Promise<StatsSnapshot> {
    return this.call('DELETE', '/stats');
  }

  faults(): Promise<FaultConfig> {
    return this.call('GET', '/faults');
  }

  setFaults(config: FaultConfig): Promise<FaultConfig> {
    return this.call('PUT', '/faults', config);
  }

  /** Merges per operation: the given fields replace those of that operation only. */
  patchFaults(patch: FaultConfig): Promise<FaultConfig> {
    return this.call('PATCH', '/faults', patch);
  }

  /** Removes every fault and restores the AWS data-plane rate limits. */
  clearFaults(): Promise<FaultConfig> {
    return this.call('DELETE', '/faults');
  }

  /** `operation` is an API name such as `RegisterInstance`, or `*` for all. */
  throttle(operation: string, share: FaultShare): Promise<FaultConfig> {
    return this.fault(operation, { throttle: share });
  }

  injectErrors(
    operation: string,
    share: FaultShare & { status?: 500 | 503 },
  ): Promise<FaultConfig> {
    return this.fault(operation, { error: share });
  }

  setLatency(operation: string, latencyMs: number): Promise<FaultConfig> {
    return this.fault(operation, { latencyMs });
  }

  /** Make the asynchronous operations the calls submit end in FAIL. */
  failOperations(operation: string, share: FaultShare): Promise<FaultConfig> {
    return this.fault(operation, { failOperation: share });
  }

  fault(operation: string, fault: OperationFault): Promise<FaultConfig> {
    return this.patchFaults({ operations: { [operation]: fault } });
  }

  /** `unavailable`: every call answers 503; `reset`: connections are dropped; `false`: back up. */
  outage(mode: 'unavailable' | 'reset' | false): Promise<FaultConfig> {
    return this.patchFaults({ outage: mode === false ? null : mode });
  }

  /** Turns off the token buckets (including AWS's data-plane limits), e.g. for load tests. */
  disableRateLimits(): Promise<FaultConfig> {
    return this.faults().then((f) => this.setFaults({ ...f, rateLimits: {} }));
  }

  config(): Promise<EmulatorConfig> {
    return this.call('GET', '/config');
  }

  setConfig(patch: EmulatorConfigPatch): Promise<EmulatorConfig> {
    return this.call('PATCH', '/config', patch);
  }

  /** Empty state, no faults, zero counts. */
  reset(): Promise<{ status: string }> {
    return this.call('POST', '/reset');
  }

  state(): Promise<EmulatorState> {
    return this.call('GET', '/state');
  }

  replaceState(state: EmulatorState): Promise<{ status: string }> {
    return this.call('PUT', '/state', state);
  }

  saveState(): Promise<{ path: string }> {
    return this.call('POST', '/state/save');
  }
}
