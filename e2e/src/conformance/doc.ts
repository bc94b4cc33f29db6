#!/usr/bin/env node
// `make conformance-doc`: docs/conformance.md from the report directory of the last
// `make conformance` (its Ginkgo report.json and meta.json), without running anything.
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

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]).endsWith(join('conformance', 'doc.js'))
) {
  const args = await yargs(hideBin(process.argv))
    .option('report-dir', { type: 'string', default: '.state/conformance/report' })
    .option('out', { type: 'string', default: 'docs/conformance.md' })
    .strict()
    .parseAsync();
  writeFileSync(resolve(args.out), renderReportDir(resolve(args.reportDir)));
  process.stderr.write(`wrote ${args.out} from ${args.reportDir}\n`);
}
