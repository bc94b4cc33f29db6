#!/usr/bin/env node
// `make bench` / `make bench-smoke`: node e2e/dist/src/bench/main.js [options]. Every option
// also reads a BENCH_* variable (--matrix ↔ BENCH_MATRIX). See docs/benchmarks.md.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { stopClusterset } from '../clusterset.js';
import { repoRoot } from '../paths.js';
import { cellName, defaultMatrix, parseMatrix } from './matrix.js';
import { runPhase } from './phase.js';
import { markdown, svgChart, textTable } from './report.js';
import { mergeReports, type BenchReport, type PhaseFailure, type PhaseResult } from './results.js';
import type { Side } from './sides.js';

const args = await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs-bench')
  .usage('Our agents (production defaults) and the AWS Go controller, side by side on the harness.')
  .env('BENCH')
  .option('matrix', {
    type: 'string',
    default: defaultMatrix,
    describe:
      'cells NxMxK[:U] (services x endpoints x clusters[:unrelated objects]), comma-separated',
  })
  .option('sides', { type: 'string', default: 'ours,peer', describe: 'ours, peer or both' })
  .option('idle-seconds', { type: 'number', default: 120, describe: 'idle window' })
  .option('settle-seconds', {
    type: 'number',
    default: 10,
    describe: 'quiet time between cold sync and the idle window',
  })
  .option('changes', {
    type: 'number',
    default: 20,
    describe: 'endpoint changes timed (sequential)',
  })
  .option('new-services', {
    type: 'number',
    default: 3,
    describe: 'new exports timed (sequential)',
  })
  .option('conflicts', {
    type: 'number',
    default: 5,
    describe: 'port conflicts between c1 and c2 raised and cleared (timed; 0: none)',
  })
  .option('unrelated', {
    type: 'number',
    default: 0,
    describe: 'unrelated Services + EndpointSlices created in every cluster first',
  })
  .option('converge-timeout-seconds', {
    type: 'number',
    describe: 'cold sync limit (default 300 + 3 × services)',
  })
  .option('change-timeout-seconds', {
    type: 'number',
    default: 180,
    describe: 'limit for one change or new service',
  })
  .option('state', {
    type: 'string',
    default: '.state/bench',
    describe: 'state directory (clusters, logs)',
  })
  .option('out', {
    type: 'string',
    describe: 'JSON results (default <state>/results.json; with --render, the merged report)',
  })
  .option('docs', {
    type: 'boolean',
    default: false,
    describe: 'also write docs/benchmarks.md and docs/benchmarks.svg',
  })
  .option('render', {
    type: 'string',
    describe:
      'measure nothing: print (and with --docs write) the report of these results JSONs (comma-separated: merged, later runs win per cell and side)',
  })
  .option('baseline', {
    type: 'string',
    describe: 'a results JSON of our side before a change, shown per cell next to the figures',
  })
  .option('baseline-label', {
    type: 'string',
    default: 'the baseline run',
    describe: 'what the baseline is (e.g. the commit it ran)',
  })
  .strict()
  .help()
  .parseAsync();

/** docs/benchmarks.md and the chart it shows. */
/**
 * Writes docs/benchmarks.{md,svg}. What people write about a run (which targets it meets, what
 * it cannot show) lives in docs/benchmarks-notes.md, which the page includes after the header,
 * so regenerating the page never loses it.
 */
function writeDocs(r: BenchReport): void {
  const docs = join(repoRoot(), 'docs');
  const notesFile = join(docs, 'benchmarks-notes.md');
  const notes = existsSync(notesFile) ? readFileSync(notesFile, 'utf8') : undefined;
  writeFileSync(join(docs, 'benchmarks.svg'), svgChart(r));
  writeFileSync(join(docs, 'benchmarks.md'), markdown(r, 'benchmarks.svg', notes));
}

const readReport = (file: string): BenchReport =>
  JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
const withBaseline = (r: BenchReport): BenchReport =>
  args.baseline === undefined
    ? r
    : { ...r, baseline: { label: args.baselineLabel, results: readReport(args.baseline).results } };

if (args.render !== undefined) {
  const saved = withBaseline(
    mergeReports(
      args.render
        .split(',')
        .map((f) => f.trim())
        .filter((f) => f !== '')
        .map(readReport),
    ),
  );
  process.stdout.write(textTable(saved));
  // --out: the merged report as JSON (docs/benchmarks.json is the one the page was made from).
  if (args.out !== undefined)
    writeFileSync(resolve(args.out), `${JSON.stringify(saved, null, 2)}\n`);
  if (args.docs) writeDocs(saved);
  process.exit(0);
}

const cells = parseMatrix(args.matrix);
const sides = args.sides.split(',').map((s) => s.trim()) as Side[];
for (const s of sides)
  if (s !== 'ours' && s !== 'peer') throw new Error(`unknown side "${s}" (ours, peer)`);
const stateRoot = resolve(args.state);
const progress = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

const settings = {
  idleSeconds: args.idleSeconds,
  settleSeconds: args.settleSeconds,
  changes: args.changes,
  newServices: args.newServices,
  conflicts: args.conflicts,
  unrelated: args.unrelated,
};
const command = [
  'make bench',
  `BENCH_MATRIX=${args.matrix}`,
  ...(args.sides !== 'ours,peer' ? [`BENCH_SIDES=${args.sides}`] : []),
  `BENCH_IDLE_SECONDS=${args.idleSeconds}`,
  `BENCH_SETTLE_SECONDS=${args.settleSeconds}`,
  `BENCH_CHANGES=${args.changes}`,
  `BENCH_NEW_SERVICES=${args.newServices}`,
  `BENCH_CONFLICTS=${args.conflicts}`,
  ...(args.unrelated > 0 ? [`BENCH_UNRELATED=${args.unrelated}`] : []),
].join(' ');

const results: PhaseResult[] = [];
const failures: PhaseFailure[] = [];
const startedAt = new Date().toISOString();
const report = (): BenchReport =>
  withBaseline({
    startedAt,
    command,
    host: { cpus: cpus().length, node: process.version, memGiB: totalmem() / 2 ** 30 },
    settings,
    results,
    failures,
  });
const out = resolve(args.out ?? join(stateRoot, 'results.json'));
mkdirSync(dirname(out), { recursive: true });

// Interrupted (Ctrl-C, a CI timeout): stop every process the running phase started (their
// pid files are under the state root) before exiting, so nothing is left running.
let stopping = false;
const onSignal = (sig: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  progress(`${sig}: stopping what the bench started under ${stateRoot}`);
  void stopClusterset(stateRoot).finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

for (const cell of cells) {
  for (const side of sides) {
    try {
      results.push(
        await runPhase(side, cell, {
          ...settings,
          stateRoot,
          convergeTimeoutSeconds: args.convergeTimeoutSeconds ?? 300 + 3 * cell.services,
          changeTimeoutSeconds: args.changeTimeoutSeconds,
          progress,
        }),
      );
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      progress(`bench ${cellName(cell)} ${side}: FAILED: ${error}`);
      failures.push({ side, cell: cellName(cell), error });
    }
    // Written after every phase: a long run that is cut short keeps what it measured.
    writeFileSync(out, `${JSON.stringify(report(), null, 2)}\n`);
    if (args.docs) writeDocs(report());
  }
}

process.stdout.write(textTable(report()));
process.stdout.write(`\nresults: ${relative(process.cwd(), out)}\n`);
if (args.docs) process.stdout.write('wrote docs/benchmarks.md and docs/benchmarks.svg\n');
if (failures.length > 0) {
  process.stderr.write(`${failures.length} phase(s) failed (see above); the run fails.\n`);
  process.exitCode = 1;
}
