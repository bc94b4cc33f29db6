#!/usr/bin/env node
// `make conformance-doc`: docs/conformance.md from the report directories of the last
// `make conformance` runs (their Ginkgo report.json and meta.json), without running anything.
// Several directories (the IPv4 and the dual-stack run) make one document, a section each.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { renderMarkdown, type RunMeta } from './markdown.js';
import { testResults, type GinkgoReport } from './results.js';
import { suiteSelection, type NodesMode } from './selection.js';

/** The markdown report of the run whose output is in `reportDir`. */
export function renderReportDir(reportDir: string): string {
  const meta = JSON.parse(readFileSync(join(reportDir, 'meta.json'), 'utf8')) as RunMeta;
  const [report] = JSON.parse(
    readFileSync(join(reportDir, 'report.json'), 'utf8'),
  ) as GinkgoReport[];
  if (report === undefined) throw new Error(`${reportDir}/report.json holds no suite report`);
  return renderMarkdown(meta, testResults(report, suiteSelection(meta.nodes as NodesMode)));
}

/**
 * One document from several reports: each report's headings go one level down under a
 * common title; a single report stays as it is.
 */
export function combineReports(reports: readonly string[]): string {
  if (reports.length === 1) return reports[0]!;
  const sections = reports.map((r) =>
    r
      .replace(/^# MCS API conformance report$/m, (h) => `${h}: ${familyLine(r)}`)
      .replace(/^#/gm, '##'),
  );
  return [
    '# MCS API conformance reports',
    '',
    `One section per run: ${reports.map(familyLine).join('; ')}.`,
    '',
    sections.join('\n'),
  ].join('\n');
}

/** The IP-family cell of a rendered report (renderMarkdown's metadata table). */
const familyLine = (report: string): string =>
  /^\| IP families \| ([^(|]+?) \(/m.exec(report)?.[1] ?? 'IPv4 only';

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]).endsWith(join('conformance', 'doc.js'))
) {
  const args = await yargs(hideBin(process.argv))
    .option('report-dir', { type: 'string', array: true, default: ['.state/conformance/report'] })
    .option('out', { type: 'string', default: 'docs/conformance.md' })
    .strict()
    .parseAsync();
  const dirs = args.reportDir.map((d) => resolve(d));
  writeFileSync(resolve(args.out), combineReports(dirs.map(renderReportDir)));
  process.stderr.write(`wrote ${args.out} from ${args.reportDir.join(', ')}\n`);
}
