/**
 * Runs the upstream conformance test binary once: its output goes to a log file and to the
 * console, it is stopped (SIGTERM, then SIGKILL) if the run is interrupted, and the exit code
 * is returned.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { selectionFlags, type SuiteSelection } from './selection.js';

export interface SuiteRun {
  readonly binary: string;
  readonly kubeconfig: string;
  readonly contexts: readonly string[];
  readonly selection: SuiteSelection;
  /** Output directory (the suite writes report.html and report.yaml to its working directory). */
  readonly outDir: string;
  readonly project: string;
  readonly version: string;
  readonly echo: (chunk: string) => void;
  readonly signal: AbortSignal;
}

/** The suite's command line (flags from conformance_suite.go and Ginkgo's own). */
export function suiteArgs(run: Omit<SuiteRun, 'binary' | 'echo' | 'signal'>): string[] {
  return [
    `--kubeconfig=${run.kubeconfig}`,
    `--contexts=${run.contexts.join(',')}`,
    `--project=${run.project}`,
    `--version=${run.version}`,
    ...selectionFlags(run.selection),
    `--ginkgo.junit-report=${join(run.outDir, 'junit.xml')}`,
    `--ginkgo.json-report=${join(run.outDir, 'report.json')}`,
    '--ginkgo.v',
    '--ginkgo.no-color',
    '--ginkgo.timeout=40m',
  ];
}

export async function runSuite(run: SuiteRun): Promise<number> {
  const log = createWriteStream(join(run.outDir, 'suite.log'));
  const child = spawn(run.binary, suiteArgs(run), {
    cwd: run.outDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    run.echo(chunk.toString());
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  };
  run.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, sig) => resolve(code ?? (sig !== null ? 128 + 15 : 1)));
    });
  } finally {
    run.signal.removeEventListener('abort', onAbort);
    if (killTimer !== undefined) clearTimeout(killTimer);
    await new Promise<void>((resolve) => log.end(resolve));
  }
}

/** MCS_SUITE_* facts written by e2e/conformance/build.sh next to the binary. */
export function readSuiteEnv(binary: string): Record<string, string> {
  try {
    const text = readFileSync(join(binary, '..', 'suite.env'), 'utf8');
    return Object.fromEntries(
      text
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  } catch {
    return {};
  }
}
