/** A flag or variable the operator must fix; the agent exits 2 saying so. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
