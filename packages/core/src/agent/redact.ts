import { logFields } from '../logging/log-fields.js';
import type { Logger } from '../logging/logger.js';

/** Keys whose values are never logged (docs/architecture.md#security: credentials never logged). */
export const secretKeyPattern =
  /secret|token|password|credential|external-?id|access-?key|session/i;

/** A copy of `config` with secret values replaced by `[redacted]` (nested objects too). */
export function redactConfig(config: unknown): unknown {
  if (Array.isArray(config)) return config.map((v) => redactConfig(v));
  if (config === null || typeof config !== 'object') return config;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    out[k] =
      secretKeyPattern.test(k) && v !== undefined && v !== '' ? '[redacted]' : redactConfig(v);
  }
  return out;
}

/**
 * Logs the effective config once at start (docs/contributing.md#config-and-logs), secrets redacted.
 */
export function logEffectiveConfig(logger: Logger, config: object): void {
  logger.info('effective configuration', { [logFields.config]: redactConfig(config) });
}
