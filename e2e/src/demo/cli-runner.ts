/** Runs the built `cloudmap-mcs` CLI (packages/cli) as a process, as a user would. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';

export const cliPath = (): string => join(repoRoot(), 'packages', 'cli', 'dist', 'src', 'main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<CliRun> {
  const main = cliPath();
  if (!existsSync(main))
    return Promise.resolve({ code: -1, stdout: '', stderr: `${main} is missing` });
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 60_000, maxBuffer: 8 << 20 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          stdout,
          stderr,
        }),
    );
  });
}
