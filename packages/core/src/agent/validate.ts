/** A flag or variable the operator must fix; the agent exits 2 saying so. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const positive = (name: string, value: number): number => {
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`--${name} must be a positive number, got ${String(value)}`);
  return value;
};

export const nonNegative = (name: string, value: number): number => {
  if (!Number.isFinite(value) || value < 0)
    throw new ConfigError(`--${name} must be 0 or a positive number, got ${String(value)}`);
  return value;
};

export const port = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 0 || value > 65535)
    throw new ConfigError(`--${name} must be a port, got ${String(value)}`);
  return value;
};

/** A comma-separated list, trimmed, empty items dropped. */
export const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** An endpoint variable: an https URL (AWS), an http one (development), or unset. */
export function endpointUrl(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^https?:\/\/[^/]/i.test(value))
    throw new ConfigError(
      `${name} must be an https:// URL (or, for a local emulator in development, http://), got ${value}`,
    );
  return value;
}
