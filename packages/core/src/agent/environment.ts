import { ConfigError } from './validate.js';

/**
 * The one variable tests use to shorten an agent's internal periods (docs/contributing.md#test-timings):
 * a JSON object of numbers, e.g. `{"pollHeartbeatSeconds":1}`. Never set it in a deployment.
 */
export const TEST_TIMINGS_VARIABLE = 'MCS_TEST_TIMINGS';

/**
 * The overrides `raw` (MCS_TEST_TIMINGS) makes to an agent's `defaults`: only keys of
 * `defaults`, each a finite number, > 0 unless listed in `zeroAllowed`. Anything else is a
 * ConfigError naming the key, so a typo in a test never silently keeps the default.
 */
export function parseTestTimings<T extends Record<string, number>>(
  defaults: T,
  raw: string | undefined,
  zeroAllowed: readonly (keyof T & string)[] = [],
): Partial<T> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`${TEST_TIMINGS_VARIABLE} is not JSON: ${why}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(`${TEST_TIMINGS_VARIABLE} must be a JSON object of numbers`);
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!Object.hasOwn(defaults, key))
      throw new ConfigError(
        `${TEST_TIMINGS_VARIABLE}: unknown key "${key}" (known: ${Object.keys(defaults).join(', ')})`,
      );
    const min = zeroAllowed.includes(key) ? 0 : Number.MIN_VALUE;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
      throw new ConfigError(
        `${TEST_TIMINGS_VARIABLE}: "${key}" must be a number ${min === 0 ? '>= 0' : '> 0'}, got ${JSON.stringify(value)}`,
      );
    out[key] = value;
  }
  return out as Partial<T>;
}

/**
 * MCS_* variables of flags that are gone, with what replaced them (issue 31, "Fewer knobs").
 * Set, they stop the agent: ignoring MCS_CLOUDMAP_ENDPOINT would send an emulator setup to AWS.
 */
export const RETIRED_VARIABLES: Readonly<Record<string, string>> = {
  MCS_KUBECONFIG: 'set KUBECONFIG (in a Pod: nothing, the service account is used)',
  MCS_REGION: 'set AWS_REGION',
  MCS_CLOUDMAP_ENDPOINT: 'set AWS_ENDPOINT_URL_SERVICEDISCOVERY',
  MCS_LEASE_NAMESPACE: 'set POD_NAMESPACE (the chart sets it from the downward API)',
  MCS_IDENTITY: 'set POD_NAME (the chart sets it from the downward API)',
  MCS_POD_NAME: 'set POD_NAME (the chart sets it from the downward API)',
  MCS_LOG_FORMAT: 'remove it: logs are JSON, or text when stdout is a terminal',
  ...Object.fromEntries(
    [
      'HEARTBEAT_SECONDS',
      'FEED_INTERVAL_SECONDS',
      'POLL_SLOW_SECONDS',
      'POLL_HEARTBEAT_SECONDS',
      'POLL_RESYNC_SECONDS',
      'POLL_JITTER',
      'POLL_MAX_BACKOFF_SECONDS',
      'LOCAL_ADDRESSES_SECONDS',
      'EXTERNAL_POLL_SECONDS',
    ].map((k) => [`MCS_${k}`, `remove it: a constant now; tests use ${TEST_TIMINGS_VARIABLE}`]),
  ),
  MCS_MAX_ENDPOINTS_PER_SLICE: 'remove it: always 100, as the EndpointSlice controller does',
  MCS_EXTERNAL_SERVICES:
    'remove it: CloudMapServiceImport objects select what is imported; RBAC on them decides who may',
};

/** Throws a ConfigError naming every retired variable set in `env` and its replacement. */
export function refuseRetired(env: Readonly<Record<string, string | undefined>>): void {
  const found = Object.keys(RETIRED_VARIABLES).filter((k) => env[k] !== undefined);
  if (found.length > 0)
    throw new ConfigError(
      `no longer read: ${found.map((k) => `${k} (${RETIRED_VARIABLES[k] ?? ''})`).join('; ')}`,
    );
}
