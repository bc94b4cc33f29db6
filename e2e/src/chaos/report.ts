/**
 * The suite's output: one row per scenario, fault → expected → observed → figures, printed as
 * a table and written as JSON and Markdown (docs/reliability.md is generated from the JSON).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

export type FigureValue = number | string;

export interface ScenarioResult {
  readonly id: string;
  readonly fault: string;
  readonly expected: string;
  readonly observed: string;
  /** e.g. `converge s`, `endpoints lost`, `Cloud Map writes`, in the order they were taken. */
  readonly figures: Readonly<Record<string, FigureValue>>;
  readonly passed: boolean;
  /** Each failed expectation, in words. Empty when passed. */
  readonly failures: readonly string[];
  readonly durationS: number;
}

export interface ChaosReport {
  readonly profile: string;
  readonly command: string;
  readonly commit: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationS: number;
  readonly cores: number;
  /** 1-minute load average at the start and at the end of the run. */
  readonly loadAverage: { readonly start: number; readonly end: number };
  readonly results: readonly ScenarioResult[];
}

export const load1 = (): number => Math.round((loadavg()[0] ?? 0) * 100) / 100;
export const coreCount = (): number => cpus().length;

export function formatFigure(v: FigureValue): string {
  if (typeof v === 'string') return v;
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

const figuresText = (r: ScenarioResult): string =>
  Object.entries(r.figures)
    .map(([k, v]) => `${k}: ${formatFigure(v)}`)
    .join('; ');

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown table (also what the console shows). */
export function resultsTable(results: readonly ScenarioResult[]): string {
  const rows = results.map(
    (r) =>
      `| ${cell(r.id)} | ${cell(r.fault)} | ${cell(r.expected)} | ${cell(r.observed)} | ${cell(figuresText(r))} | ${r.passed ? 'pass' : '**FAIL**'} |`,
  );
  return [
    '| scenario | fault | expected | observed | figures | result |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function reportMarkdown(report: ChaosReport): string {
  const failed = report.results.filter((r) => !r.passed);
  return [
    `Profile \`${report.profile}\`, commit \`${report.commit}\`, ${report.startedAt} → ${report.finishedAt} ` +
      `(${Math.round(report.durationS)} s), ${String(report.cores)} cores, load average ${report.loadAverage.start} at the start and ${report.loadAverage.end} at the end.`,
    '',
    `Reproduce: \`${report.command}\``,
    '',
    resultsTable(report.results),
    '',
    failed.length === 0
      ? 'Every scenario passed.'
      : [
          `${String(failed.length)} of ${String(report.results.length)} scenarios failed:`,
          '',
          ...failed.map((r) => `- **${r.id}**: ${r.failures.join('; ')}`),
        ].join('\n'),
    '',
  ].join('\n');
}

/** Writes `<dir>/<base>.json` and `<dir>/<base>.md`; returns their paths. */
export function writeReport(report: ChaosReport, dir: string, base: string): string[] {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${base}.json`);
  const md = join(dir, `${base}.md`);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(md, reportMarkdown(report));
  return [json, md];
}

/** Each scenario's result from the part that finished last (a scenario re-run after a fix). */
function latestPerScenario(parts: readonly ChaosReport[]): ScenarioResult[] {
  const byId = new Map<string, ScenarioResult>();
  for (const part of [...parts].sort((a, b) => a.finishedAt.localeCompare(b.finishedAt)))
    for (const r of part.results) byId.set(r.id, r);
  return [...byId.values()];
}

/**
 * One report from runs of the same profile that ran side by side (each on its own clusterset)
 * or one after the other (scenarios re-run after a fix: the latest result counts), results in
 * `order` (scenario ids), the commands of every part kept.
 */
export function mergeReports(
  parts: readonly ChaosReport[],
  order: readonly string[] = [],
): ChaosReport {
  const [first] = parts;
  if (first === undefined) throw new Error('no report to merge');
  if (parts.length === 1) return first;
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  const startedAt = parts.map((p) => p.startedAt).sort()[0] ?? first.startedAt;
  const finishedAt =
    parts
      .map((p) => p.finishedAt)
      .sort()
      .at(-1) ?? first.finishedAt;
  return {
    profile: first.profile,
    command: `${String(parts.length)} parts, each on its own clusterset, run side by side or again after a fix landed (the latest result of each scenario is shown): ${parts.map((p) => p.command).join(' ; ')}`,
    commit: [...new Set(parts.map((p) => p.commit))].join(', '),
    startedAt,
    finishedAt,
    durationS: Math.round((Date.parse(finishedAt) - Date.parse(startedAt)) / 1000),
    cores: first.cores,
    loadAverage: {
      start: Math.max(...parts.map((p) => p.loadAverage.start)),
      end: Math.max(...parts.map((p) => p.loadAverage.end)),
    },
    results: latestPerScenario(parts).sort((a, b) => rank(a.id) - rank(b.id)),
  };
}
