/**
 * The commands of docs/migrate-from-aws-controller.md, taken from the doc itself so the doc
 * cannot drift from what the migration test runs: every fenced `sh` block right after a
 * `<!-- migration-test: PHASE -->` comment belongs to PHASE, in document order.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';

export const migrationDoc = (): string =>
  join(repoRoot(), 'docs', 'migrate-from-aws-controller.md');

export interface DocStep {
  readonly phase: string;
  /** The doc line of the block's opening fence (1-based), for messages. */
  readonly line: number;
  readonly script: string;
}

const MARKER = /^\s*<!-- migration-test: ([a-z-]+) -->\s*$/;
const FENCE = /^(\s*)```(\S*)\s*$/;

/** The tagged blocks of `markdown`, de-indented (list items indent them). */
export function docSteps(markdown: string): DocStep[] {
  const lines = markdown.split('\n');
  const steps: DocStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const phase = MARKER.exec(lines[i]!)?.[1];
    if (phase === undefined) continue;
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    const open = FENCE.exec(lines[j] ?? '');
    if (open === undefined || open === null || open[2] !== 'sh')
      throw new Error(`line ${i + 1}: a migration-test marker not followed by a \`\`\`sh block`);
    const indent = open[1]!.length;
    const body: string[] = [];
    let k = j + 1;
    for (; k < lines.length && FENCE.exec(lines[k]!)?.[2] !== ''; k++)
      body.push(lines[k]!.slice(Math.min(indent, lines[k]!.length - lines[k]!.trimStart().length)));
    if (k === lines.length) throw new Error(`line ${j + 1}: unterminated block`);
    steps.push({ phase, line: j + 1, script: body.join('\n') });
    i = k;
  }
  return steps;
}

/** Runs one step with bash (-euo pipefail) in the repository root; rejects on a non-zero exit. */
export function runStep(
  step: DocStep,
  env: Record<string, string>,
  logFile: string,
  timeoutMs = 180_000,
): Promise<number> {
  const t0 = Date.now();
  appendFileSync(
    logFile,
    `\n### ${step.phase} (doc line ${step.line}) ${env['MIGRATION_CLUSTER'] ?? ''}\n${step.script}\n---\n`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', step.script], {
      cwd: repoRoot(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => out.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString('utf8');
      appendFileSync(logFile, `${text}--- exit ${String(code)} after ${Date.now() - t0} ms\n`);
      if (code === 0) resolve(Date.now() - t0);
      else
        reject(
          new Error(
            `doc step at line ${step.line} (${step.phase}) exited ${String(code)}:\n${step.script}\n${text.slice(-2000)}`,
          ),
        );
    });
  });
}

/** The doc's steps of each phase; fails when a phase the test needs has none. */
export function loadDocSteps(phases: readonly string[]): Map<string, DocStep[]> {
  const all = docSteps(readFileSync(migrationDoc(), 'utf8'));
  const byPhase = new Map<string, DocStep[]>();
  for (const s of all) byPhase.set(s.phase, [...(byPhase.get(s.phase) ?? []), s]);
  for (const p of phases)
    if ((byPhase.get(p) ?? []).length === 0)
      throw new Error(`docs/migrate-from-aws-controller.md has no migration-test: ${p} block`);
  return byPhase;
}
