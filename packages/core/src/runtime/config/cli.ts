import yargs, { type Argv, type Options } from 'yargs';

export const envPrefix = 'MCS';

/** `log-level` → `MCS_LOG_LEVEL`. */
export const envName = (option: string, prefix = envPrefix): string =>
  `${prefix}_${option
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toUpperCase()}`;

/** A flag is wrong or missing; main.ts prints the message and exits 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface CliOptions<O extends Record<string, Options>> {
  /** The program name in --help. */
  name: string;
  description: string;
  options: O;
  /** process.argv.slice(2) in main.ts. */
  argv: readonly string[];
  /**
   * The environment (main.ts passes process.env): each option `foo-bar` may be set as
   * `MCS_FOO_BAR`; a flag on the command line wins over the variable.
   */
  env: Readonly<Record<string, string | undefined>>;
}

export interface ParsedCli<T> {
  args: T;
  /** MCS_* variables that match no option (a typo, or another tool's): log them as a warning. */
  unknownEnv: string[];
}

/**
 * Builds the yargs parser both agents share: strict flags, `MCS_*` equivalents for every
 * option (yargs `.env('MCS')` semantics, but from the env passed in, so nothing below main.ts
 * reads process.env), and failures as ConfigError instead of yargs' own exit.
 */
export function buildCli<O extends Record<string, Options>>(cli: CliOptions<O>): Argv {
  const fromEnv: Record<string, string> = {};
  for (const option of Object.keys(cli.options)) {
    const value = cli.env[envName(option)];
    if (value !== undefined && value !== '') fromEnv[option] = value;
  }
  const documented = Object.fromEntries(
    Object.entries(cli.options).map(([k, o]) => [
      k,
      { ...o, describe: `${o.describe ?? ''} [env ${envName(k)}]`.trim() },
    ]),
  );
  return yargs([...cli.argv])
    .scriptName(cli.name)
    .usage(`$0: ${cli.description}`)
    .options(documented)
    .config(fromEnv)
    .strict()
    .help()
    .version(false)
    .wrap(null)
    .fail((message, error) => {
      throw new ConfigError(message ?? error.message, { cause: error });
    });
}

/** Parses, reporting unknown MCS_* variables; throws ConfigError on bad input. */
export function parseCli<O extends Record<string, Options>>(
  cli: CliOptions<O>,
): ParsedCli<Record<string, unknown>> {
  const known = new Set(Object.keys(cli.options).map((o) => envName(o)));
  const unknownEnv = Object.keys(cli.env)
    .filter((k) => k.startsWith(`${envPrefix}_`) && !known.has(k))
    .sort();
  const args = buildCli(cli).parseSync() as Record<string, unknown>;
  return { args, unknownEnv };
}

/**
 * Runs main's config step: on ConfigError prints `<name>: <message>` and the hint to use
 * --help, then exits 2 (usage error), so a bad flag never becomes a crash loop stack trace.
 */
export function configOrExit<T>(
  name: string,
  build: () => T,
  io: { stderr: (line: string) => void; exit: (code: number) => never } = {
    stderr: (line) => process.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  },
): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`${name}: invalid configuration: ${error.message}`);
    io.stderr(`Run ${name} --help for the flags and their MCS_* environment variables.`);
    return io.exit(2);
  }
}
