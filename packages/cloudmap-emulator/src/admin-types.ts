import type { StatusMode } from './errors.js';
import type { Quotas } from './model.js';

/** Settings that can change at run time through `PUT /_emulator/config`. */
export interface EmulatorConfig {
  operationDelayMs: number;
  idempotencyWindowMs: number;
  quotas: Quotas;
  /** `observed` (default): every modeled error is HTTP 400; `smithy`: 404/409/429 as modeled. */
  statusMode: StatusMode;
  region: string;
  accountId: string;
}

/** A partial change; `quotas` merges key by key. */
export type EmulatorConfigPatch = Partial<Omit<EmulatorConfig, 'quotas'>> & {
  quotas?: Partial<Quotas>;
};

/** Paths of the admin API, all under the emulator's own port. */
export const ADMIN_PREFIX = '/_emulator';
