/**
 * The tests of one conformance run, read from Ginkgo's JSON report (`--ginkgo.json-report`).
 * The JSON report is read rather than the JUnit file (which is written too, for CI systems)
 * because it keeps what the upstream report shows: the labels as a list, the suite's
 * `spec-ref` entry (the KEP section a test checks) and its `non-conformant` entry.
 */
import type { SuiteSelection } from './selection.js';
import { exclusionOf } from './selection.js';

/** The subset of Ginkgo v2's types.Report that is read here. */
export interface GinkgoReport {
  SuiteDescription: string;
  SuiteSucceeded: boolean;
  RunTime: number;
  SpecReports: GinkgoSpecReport[];
}

export interface GinkgoSpecReport {
  ContainerHierarchyTexts: string[] | null;
  ContainerHierarchyLabels: (string[] | null)[] | null;
  LeafNodeType: string;
  LeafNodeText: string;
  LeafNodeLabels: string[] | null;
  State: string;
  RunTime: number;
  Failure?: { Message: string; FailureNodeType?: string };
  ReportEntries?: { Name: string; Value?: { Representation?: string; AsJSON?: string } }[] | null;
}

/** How the upstream report classifies a test (report.go: Yes / No / Unknown / Skipped). */
export type Verdict = 'conformant' | 'non-conformant' | 'unknown' | 'skipped';

export interface TestResult {
  /** Container texts and the leaf text, joined as Ginkgo prints them. */
  readonly text: string;
  /** Required or Optional (the suite's reporting labels); '' if neither. */
  readonly group: 'Required' | 'Optional' | '';
  /** The other labels, sorted. */
  readonly labels: readonly string[];
  readonly state: string;
  readonly verdict: Verdict;
  /** Why it was skipped, failed or found non-conformant ('' when it passed). */
  readonly reason: string;
  /** The KEP section the test checks. */
  readonly ref: string;
  readonly seconds: number;
  /** Excluded by the node-mode selection (did not run by design). */
  readonly excluded: boolean;
}

const GROUPS = ['Required', 'Optional'] as const;

function entry(spec: GinkgoSpecReport, name: string): string {
  const e = spec.ReportEntries?.find((r) => r.Name === name);
  if (e?.Value === undefined) return '';
  if (e.Value.AsJSON !== undefined && e.Value.AsJSON !== '') {
    try {
      const v: unknown = JSON.parse(e.Value.AsJSON);
      if (typeof v === 'string') return v;
    } catch {
      // fall back to the representation
    }
  }
  return e.Value.Representation ?? '';
}

/**
 * One line from a Gomega failure message: its first line, except for a timed-out Eventually
 * or Consistently, whose first line only says "Timed out after 20.001s." and whose next lines
 * say what was awaited ("ServiceImport was not found on cluster "c1"").
 */
export function failureSummary(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const timeout = /^Timed out after ([\d.]+)s\.$/.exec(lines[0] ?? '');
  if (timeout !== null) {
    const what = lines.slice(1).find((l) => !l.startsWith('The function passed to'));
    if (what !== undefined) return `${what} (timed out after ${timeout[1]} s)`.slice(0, 300);
  }
  return (lines[0] ?? '').slice(0, 300);
}

export function testResults(report: GinkgoReport, sel: SuiteSelection): TestResult[] {
  return report.SpecReports.filter((s) => s.LeafNodeType === 'It').map((s) => {
    const text = [...(s.ContainerHierarchyTexts ?? []), s.LeafNodeText]
      .filter((t) => t.trim() !== '')
      .join(' ');
    const all = [
      ...(s.ContainerHierarchyLabels ?? []).flatMap((l) => l ?? []),
      ...(s.LeafNodeLabels ?? []),
    ];
    const group = GROUPS.find((g) => all.includes(g)) ?? '';
    const labels = [...new Set(all.filter((l) => l !== group))].sort();
    const ref = entry(s, 'spec-ref');
    const nonConformant = entry(s, 'non-conformant');
    const failure = failureSummary(s.Failure?.Message ?? '');
    let verdict: Verdict;
    let reason = '';
    let excluded = false;
    if (s.State === 'passed') verdict = 'conformant';
    else if (s.State === 'skipped' || s.State === 'pending') {
      verdict = 'skipped';
      const exclusion = exclusionOf(sel, { text, labels: all });
      excluded = exclusion !== undefined && failure === '';
      reason = excluded ? (exclusion?.reason ?? '') : failure || 'skipped';
    } else if (nonConformant !== '' || s.ReportEntries?.some((r) => r.Name === 'non-conformant')) {
      verdict = 'non-conformant';
      reason = failure.includes(nonConformant)
        ? failure
        : [nonConformant, failure].filter((r) => r !== '').join(': ');
    } else {
      verdict = 'unknown';
      reason = `${s.State}: ${failure}`;
    }
    return {
      text,
      group,
      labels,
      state: s.State,
      verdict,
      reason,
      ref,
      seconds: s.RunTime / 1e9,
      excluded,
    };
  });
}

export interface Tally {
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  readonly excluded: number;
  /** Skipped although the selection meant them to run (a failure of the run). */
  readonly skippedUnexpectedly: number;
}

export function tally(results: readonly TestResult[]): Tally {
  const count = (p: (r: TestResult) => boolean) => results.filter(p).length;
  return {
    total: results.length,
    passed: count((r) => r.verdict === 'conformant'),
    failed: count((r) => r.verdict === 'non-conformant' || r.verdict === 'unknown'),
    excluded: count((r) => r.excluded),
    skippedUnexpectedly: count((r) => r.verdict === 'skipped' && !r.excluded),
  };
}
