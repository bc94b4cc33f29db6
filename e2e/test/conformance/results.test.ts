import { describe, expect, it } from 'vitest';
import { combineReports } from '../../src/conformance/doc.js';
import { renderMarkdown, type RunMeta } from '../../src/conformance/markdown.js';
import {
  failureSummary,
  tally,
  testResults,
  type GinkgoReport,
  type GinkgoSpecReport,
} from '../../src/conformance/results.js';
import { suiteSelection } from '../../src/conformance/selection.js';

const ref = (url: string) => ({ Name: 'spec-ref', Value: { AsJSON: JSON.stringify(url) } });

function spec(over: Partial<GinkgoSpecReport>): GinkgoSpecReport {
  return {
    ContainerHierarchyTexts: ['', 'A ClusterIP service exported on two clusters'],
    ContainerHierarchyLabels: [['ClusterIP'], []],
    LeafNodeType: 'It',
    LeafNodeText: 'should expose the union of the ports',
    LeafNodeLabels: ['Required'],
    State: 'passed',
    RunTime: 2.5e9,
    ReportEntries: [ref('https://kep/#ports')],
    ...over,
  };
}

const report: GinkgoReport = {
  SuiteDescription: 'Conformance Suite',
  SuiteSucceeded: false,
  RunTime: 60e9,
  SpecReports: [
    spec({ LeafNodeType: 'BeforeSuite', LeafNodeText: '' }),
    spec({}),
    spec({
      LeafNodeText: 'should report a Conflict condition on each ServiceExport',
      State: 'failed',
      Failure: {
        Message:
          'Timed out after 20.023s.\nThe Conflict condition was not set to True\nExpected\n    <bool>: false',
      },
      ReportEntries: [
        ref('https://kep/#conflict'),
        {
          Name: 'non-conformant',
          Value: { AsJSON: '"The Conflict condition was not set to True"' },
        },
      ],
    }),
    spec({
      LeafNodeText: 'should get an error',
      State: 'failed',
      Failure: { Message: 'Unexpected error:\n  connection refused' },
      ReportEntries: null,
    }),
    spec({
      ContainerHierarchyTexts: [''],
      ContainerHierarchyLabels: [['Optional', 'DNS', 'ClusterIP']],
      LeafNodeText: 'should resolve',
      LeafNodeLabels: [],
      State: 'skipped',
      RunTime: 0,
    }),
    spec({
      ContainerHierarchyTexts: ['', 'Connectivity to a service that is not exported'],
      ContainerHierarchyLabels: [[], []],
      LeafNodeText: 'should be inaccessible',
      State: 'skipped',
      RunTime: 0,
    }),
    spec({
      LeafNodeText: 'needs two clusters',
      State: 'skipped',
      Failure: { Message: 'This test requires at least 2 clusters - skipping' },
    }),
  ],
};

describe('testResults', () => {
  const results = testResults(report, suiteSelection('fake'));

  it('keeps the It nodes with their text, group, other labels and KEP reference', () => {
    expect(results).toHaveLength(6);
    expect(results[0]).toMatchObject({
      text: 'A ClusterIP service exported on two clusters should expose the union of the ports',
      group: 'Required',
      labels: ['ClusterIP'],
      verdict: 'conformant',
      reason: '',
      ref: 'https://kep/#ports',
      seconds: 2.5,
      excluded: false,
    });
  });

  it('tells non-conformance (the suite says so) from an unexpected failure', () => {
    expect(results[1]).toMatchObject({
      verdict: 'non-conformant',
      reason: 'The Conflict condition was not set to True (timed out after 20.023 s)',
    });
    expect(results[2]).toMatchObject({ verdict: 'unknown', reason: 'failed: Unexpected error:' });
  });

  it('gives the selection’s reason for excluded tests and the suite’s for run-time skips', () => {
    expect(results[3]).toMatchObject({ group: 'Optional', labels: ['ClusterIP', 'DNS'] });
    expect(results[3]!.excluded).toBe(true);
    expect(results[3]!.reason).toContain('nslookup');
    expect(results[4]!.excluded).toBe(true);
    expect(results[4]!.reason).toContain('execs nc');
    expect(results[5]).toMatchObject({
      verdict: 'skipped',
      excluded: false,
      reason: 'This test requires at least 2 clusters - skipping',
    });
  });

  it('counts passed, failed, excluded and unexpected skips', () => {
    expect(tally(results)).toEqual({
      total: 6,
      passed: 1,
      failed: 2,
      excluded: 2,
      skippedUnexpectedly: 1,
    });
  });

  it('on real nodes nothing is excluded: a skip is unexpected', () => {
    const real = testResults(report, suiteSelection('real'));
    expect(tally(real)).toMatchObject({ excluded: 0, skippedUnexpectedly: 3 });
  });
});

describe('failureSummary', () => {
  it('takes the first non-empty line, trimmed', () => {
    expect(failureSummary('\n  first line  \nsecond')).toBe('first line');
    expect(failureSummary('')).toBe('');
  });

  it('says what a timed-out Eventually awaited', () => {
    const message = [
      'Timed out after 20.001s.',
      'The function passed to Eventually failed at sigs.k8s.io/mcs-api/conformance/conformance_suite.go:273 with:',
      'ServiceImport was not found on cluster "c1"',
      'Expected',
    ].join('\n');
    expect(failureSummary(message)).toBe(
      'ServiceImport was not found on cluster "c1" (timed out after 20.001 s)',
    );
    expect(failureSummary('Timed out after 5.000s.')).toBe('Timed out after 5.000s.');
  });
});

describe('renderMarkdown', () => {
  const meta: RunMeta = {
    project: 'cloudmap-mcs',
    projectVersion: 'abc1234',
    suiteCommit: 'ded161af6ea9596cd9e878c61ed4f4e8d5cf8401',
    suiteSource: '/x/mcs-api',
    goVersion: 'go1.26.8',
    kubernetesVersion: 'v1.36.3',
    nodes: 'fake',
    labelFilter: '!DNS && !Connectivity',
    skip: ['a\\.b'],
    exclusions: suiteSelection('fake').exclusions,
    agentFlags: { 'export agent': ['--health-port=<p>'] },
    clusters: 2,
    startedAt: '2026-12-01T07:00:00.000Z',
    suiteSeconds: 61,
    totalSeconds: 95,
    command: 'make conformance NODES=fake',
  };
  const md = renderMarkdown(meta, testResults(report, suiteSelection('fake')));

  it('states the counts, the suite commit, the Kubernetes version and the selection', () => {
    expect(md).toContain('**1 of 4 tests that ran passed**; 2 of the suite');
    expect(md).toContain('**2 failed**');
    expect(md).toContain('`ded161af6ea9596cd9e878c61ed4f4e8d5cf8401`');
    expect(md).toContain('| Kubernetes | v1.36.3');
    expect(md).toContain('`!DNS && !Connectivity`');
  });

  it('has one table per group with each test, its labels, its verdict and its reason', () => {
    expect(md).toContain('## Required');
    expect(md).toContain('## Optional');
    expect(md).toContain(
      '| Yes | ClusterIP | [A ClusterIP service exported on two clusters should expose the union of the ports](https://kep/#ports) |  |',
    );
    expect(md).toMatch(
      /\| No \| ClusterIP \| .*should report a Conflict condition.*\| The Conflict/,
    );
    expect(md).toMatch(/\| Skipped \| ClusterIP, DNS \| .*should resolve.*\| needs running pods/);
  });

  it('escapes pipes in cells', () => {
    const withPipe = testResults(
      { ...report, SpecReports: [spec({ LeafNodeText: 'a | b' })] },
      suiteSelection('fake'),
    );
    expect(renderMarkdown(meta, withPipe)).toContain('a \\| b');
  });

  it('one document from the IPv4 and the dual-stack run: a section each, headings one down', () => {
    const dual = renderMarkdown(
      { ...meta, ipFamily: 'dual', command: 'make conformance NODES=fake IP_FAMILY=dual' },
      testResults(report, suiteSelection('fake')),
    );
    expect(md).toContain('| IP families | IPv4 only (IP_FAMILY=ipv4) |');
    const doc = combineReports([md, dual]);
    expect(doc.split('\n')[0]).toBe('# MCS API conformance reports');
    expect(doc).toContain('One section per run: IPv4 only; dual stack, IPv4 primary.');
    expect(doc).toContain('## MCS API conformance report: IPv4 only');
    expect(doc).toContain('## MCS API conformance report: dual stack, IPv4 primary');
    expect(doc.match(/^### Required$/gm)).toHaveLength(2);
    expect(doc).not.toMatch(/^## Required$/m);
    expect(combineReports([md])).toBe(md);
  });
});
