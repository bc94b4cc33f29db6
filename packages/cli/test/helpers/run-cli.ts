/** Runs the built `cloudmap-mcs` binary as a real process (integration tests). */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const cliMain = join(dirname(fileURLToPath(import.meta.url)), '../../dist/src/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Readonly<Record<string, string>>): Promise<CliResult> {
  if (!existsSync(cliMain)) throw new Error(`${cliMain} is missing: run pnpm exec tsc --build`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliMain, ...args],
      // Only what is given: no AWS settings or kubeconfig leak in from the caller.
      { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
