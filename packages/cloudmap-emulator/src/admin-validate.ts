import type { EmulatorConfigPatch } from './admin-types.js';
import type { FaultConfig } from './faults.js';
import { DEFAULT_QUOTAS } from './model.js';

/** A malformed admin request: answered 400 so a typo never silently configures nothing. */
export class AdminValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminValidationError';
  }
}

type Obj = Record<string, unknown>;

function object(value: unknown, path: string, allowed: readonly string[]): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AdminValidationError(`${path} must be an object`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      throw new AdminValidationError(`${path}.${key} is not a known field (${allowed.join(', ')})`);
  }
  return value as Obj;
}

function number(value: unknown, path: string, min: number, max = Infinity, integer = false): void {
  if (value === undefined) return;
  if (
    typeof value !== 'number' ||
    !(value >= min && value <= max) ||
    (integer && !Number.isInteger(value))
  ) {
    throw new AdminValidationError(
      `${path} must be a${integer ? 'n integer' : ' number'} in [${min}, ${max}]`,
    );
  }
}

function share(value: unknown, path: string, extra: readonly string[] = []): void {
  if (value === undefined) return;
  const s = object(value, path, ['share', 'next', ...extra]);
  number(s['share'], `${path}.share`, 0, 1);
  number(s['next'], `${path}.next`, 0, Infinity, true);
}

export function validateFaultConfig(value: unknown): FaultConfig {
  const cfg = object(value, 'faults', ['outage', 'operations', 'rateLimits', 'seed']);
  number(cfg['seed'], 'faults.seed', 0, 2 ** 32 - 1, true);
  if (
    cfg['outage'] !== undefined &&
    cfg['outage'] !== null &&
    cfg['outage'] !== 'unavailable' &&
    cfg['outage'] !== 'reset'
  ) {
    throw new AdminValidationError('faults.outage must be "unavailable", "reset" or null');
  }
  for (const [op, raw] of Object.entries(
    object(cfg['operations'] ?? {}, 'faults.operations', Object.keys(cfg['operations'] ?? {})),
  )) {
    const path = `faults.operations.${op}`;
    const f = object(raw, path, ['throttle', 'error', 'latencyMs', 'failOperation']);
    share(f['throttle'], `${path}.throttle`);
    share(f['error'], `${path}.error`, ['status']);
    const status = (f['error'] as Obj | undefined)?.['status'];
    if (status !== undefined && status !== 500 && status !== 503)
      throw new AdminValidationError(`${path}.error.status must be 500 or 503`);
    number(f['latencyMs'], `${path}.latencyMs`, 0, 600_000);
    share(f['failOperation'], `${path}.failOperation`);
  }
  for (const [op, raw] of Object.entries(
    object(cfg['rateLimits'] ?? {}, 'faults.rateLimits', Object.keys(cfg['rateLimits'] ?? {})),
  )) {
    const limit = object(raw, `faults.rateLimits.${op}`, [
      'ratePerSecond',
      'burst',
      'otherUsersPerSecond',
    ]);
    if (limit['ratePerSecond'] === undefined || limit['burst'] === undefined) {
      throw new AdminValidationError(`faults.rateLimits.${op} needs ratePerSecond and burst`);
    }
    number(limit['ratePerSecond'], `faults.rateLimits.${op}.ratePerSecond`, 0);
    number(limit['burst'], `faults.rateLimits.${op}.burst`, 1);
    number(limit['otherUsersPerSecond'], `faults.rateLimits.${op}.otherUsersPerSecond`, 0);
  }
  return cfg as FaultConfig;
}

export function validateConfigPatch(value: unknown): EmulatorConfigPatch {
  const cfg = object(value, 'config', [
    'operationDelayMs',
    'idempotencyWindowMs',
    'quotas',
    'statusMode',
    'region',
    'accountId',
  ]);
  number(cfg['operationDelayMs'], 'config.operationDelayMs', 0, 3_600_000);
  number(cfg['idempotencyWindowMs'], 'config.idempotencyWindowMs', 0);
  if (
    cfg['statusMode'] !== undefined &&
    cfg['statusMode'] !== 'observed' &&
    cfg['statusMode'] !== 'smithy'
  ) {
    throw new AdminValidationError('config.statusMode must be "observed" or "smithy"');
  }
  for (const key of ['region', 'accountId']) {
    if (cfg[key] !== undefined && typeof cfg[key] !== 'string')
      throw new AdminValidationError(`config.${key} must be a string`);
  }
  const quotas = object(cfg['quotas'] ?? {}, 'config.quotas', Object.keys(DEFAULT_QUOTAS));
  for (const [key, v] of Object.entries(quotas))
    number(v, `config.quotas.${key}`, 0, Infinity, true);
  return cfg as EmulatorConfigPatch;
}
