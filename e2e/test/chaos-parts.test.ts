// The fault suite's own parts that can be checked without clusters: the instance audit that
// decides "exact, no orphans, no duplicates", the flag merge, the report table and the
// cuttable proxy.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeFlags } from '../src/chaos/context.js';
import { partsFor } from '../src/chaos/parts.js';
import { sourcesKey } from '../src/chaos/scenarios/ten.js';
import { CuttableProxy } from '../src/chaos/proxy.js';
import { auditInstances } from '../src/chaos/records.js';
import {
  mergeReports,
  reportMarkdown,
  resultsTable,
  type ScenarioResult,
} from '../src/chaos/report.js';

const endpoint = (id: string, ip: string, cluster = 'c1') => ({
  id,
  attributes: { CLUSTER_ID: cluster, MCS_RECORD: 'endpoint', AWS_INSTANCE_IPV4: ip },
});
const exportRecord = (cluster = 'c1') => ({
  id: `${cluster}-export`,
  attributes: { CLUSTER_ID: cluster, MCS_RECORD: 'export' },
});

describe('auditInstances', () => {
  it('an exact set has no orphans, duplicates or missing addresses', () => {
    const a = auditInstances(
      [exportRecord(), endpoint('a', '10.1.0.1'), endpoint('b', '10.1.0.2')],
      'c1',
      ['10.1.0.1', '10.1.0.2'],
    );
    expect([a.total, a.exportRecords, a.orphans, a.duplicates, a.missing]).toEqual([
      3,
      1,
      [],
      [],
      [],
    ]);
  });

  it('finds orphans, duplicates, missing addresses and ignores other clusters', () => {
    const a = auditInstances(
      [
        exportRecord(),
        exportRecord(),
        endpoint('a', '10.1.0.1'),
        endpoint('a2', '10.1.0.1'),
        endpoint('x', '10.1.0.9'),
        endpoint('o', '10.2.0.1', 'c2'),
      ],
      'c1',
      ['10.1.0.1', '10.1.0.2'],
    );
    expect(a.exportRecords).toBe(2);
    expect(a.duplicates).toEqual(['10.1.0.1']);
    expect(a.orphans).toEqual(['10.1.0.9']);
    expect(a.missing).toEqual(['10.1.0.2']);
    expect(a.total).toBe(5);
  });
});

it('mergeFlags: a later flag replaces an earlier one of the same name, order kept', () => {
  expect(mergeFlags(['--a=1', '--b=2', '--a=3', '--c'])).toEqual(['--a=3', '--b=2', '--c']);
});

describe('report', () => {
  const result = (over: Partial<ScenarioResult>): ScenarioResult => ({
    id: 'x',
    fault: 'f | g',
    expected: 'e',
    observed: 'o',
    figures: { 'converge s': 1.25, lost: 0, note: 'n/a' },
    passed: true,
    failures: [],
    durationS: 3,
    ...over,
  });

  it('renders one row per scenario with escaped cells and figures', () => {
    const table = resultsTable([
      result({}),
      result({ id: 'y', passed: false, failures: ['lost 2'] }),
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| x | f \\| g | e | o | converge s: 1.3; lost: 0; note: n/a | pass |');
    expect(lines[3]).toContain('**FAIL**');
  });

  it('the Markdown names the command, the load average and every failure', () => {
    const md = reportMarkdown({
      profile: 'long',
      command: 'make chaos',
      commit: 'abc',
      startedAt: 's',
      finishedAt: 'f',
      durationS: 10,
      cores: 2,
      loadAverage: { start: 1.5, end: 2 },
      results: [result({ id: 'y', passed: false, failures: ['lost 2'] })],
    });
    expect(md).toContain('Reproduce: `make chaos`');
    expect(md).toContain('load average 1.5 at the start and 2 at the end');
    expect(md).toContain('- **y**: lost 2');
  });
});

describe('CuttableProxy', () => {
  let upstream: Server;
  const proxy = { p: undefined as CuttableProxy | undefined };
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`upstream ${req.method ?? ''} ${req.url ?? ''}`);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    proxy.p = new CuttableProxy(
      `http://127.0.0.1:${String((upstream.address() as AddressInfo).port)}`,
    );
    await proxy.p.start();
  });
  afterAll(async () => {
    await proxy.p?.stop();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  it('forwards until cut, answers 503 while cut, forwards again after', async () => {
    const p = proxy.p!;
    const call = async () => {
      const res = await fetch(`${p.url}/x?y=1`, { method: 'POST', body: '{}' });
      return `${String(res.status)} ${await res.text()}`;
    };
    expect(await call()).toBe('200 upstream POST /x?y=1');
    p.cut(true);
    expect(await call()).toMatch(/^503 .*ServiceUnavailableException/);
    expect(p.refused).toBe(1);
    p.cut(false);
    expect(await call()).toBe('200 upstream POST /x?y=1');
  });

  it('records the calls it passes on; writes are all but Get, List and Discover', async () => {
    const p = proxy.p!;
    const since = Date.now();
    for (const op of ['GetOperation', 'RegisterInstance', 'DiscoverInstances', 'ListServices'])
      await fetch(`${p.url}/`, {
        method: 'POST',
        headers: { 'x-amz-target': `Route53AutoNaming_v20170314.${op}` },
        body: '{}',
      }).then((r) => r.text());
    expect(p.calls.filter((c) => c.at >= since).map((c) => c.operation)).toEqual([
      'GetOperation',
      'RegisterInstance',
      'DiscoverInstances',
      'ListServices',
    ]);
    expect(p.writes(since).map((c) => c.operation)).toEqual(['RegisterInstance']);
  });
});

it('mergeReports: parts run side by side become one report in scenario order', () => {
  const part = (id: string, start: string, end: string, load: number) => ({
    profile: 'long',
    command: `make chaos CHAOS_ARGS='--only ${id}'`,
    commit: 'abc',
    startedAt: start,
    finishedAt: end,
    durationS: 1,
    cores: 2,
    loadAverage: { start: load, end: load },
    results: [
      {
        id,
        fault: 'f',
        expected: 'e',
        observed: 'o',
        figures: {},
        passed: true,
        failures: [],
        durationS: 1,
      },
    ],
  });
  const merged = mergeReports(
    [
      part('b', '2026-01-01T00:00:10.000Z', '2026-01-01T00:01:00.000Z', 3),
      part('a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:30.000Z', 5),
    ],
    ['a', 'b'],
  );
  expect(merged.results.map((r) => r.id)).toEqual(['a', 'b']);
  expect(merged.durationS).toBe(60);
  expect(merged.loadAverage).toEqual({ start: 5, end: 5 });
  expect(merged.command).toContain("--only b' ; make chaos CHAOS_ARGS='--only a'");
});

it('mergeReports: a scenario re-run in a later part replaces its earlier result', () => {
  const part = (end: string, passed: boolean) => ({
    profile: 'long',
    command: 'c',
    commit: end,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: end,
    durationS: 1,
    cores: 2,
    loadAverage: { start: 1, end: 1 },
    results: [
      {
        id: 'a',
        fault: 'f',
        expected: 'e',
        observed: end,
        figures: {},
        passed,
        failures: [],
        durationS: 1,
      },
    ],
  });
  const merged = mergeReports([
    part('2026-01-01T00:09:00.000Z', true),
    part('2026-01-01T00:05:00.000Z', false),
  ]);
  expect(merged.results).toHaveLength(1);
  expect(merged.results[0]?.passed).toBe(true);
});

describe('partsFor (which clustersets a run starts)', () => {
  const two = ['baseline', 'throttling'];
  const ten = ['ten-join', 'ten-quotas'];
  const every = [...two, ...ten];
  it('all: the 2-cluster part, then the 10-cluster part', () => {
    expect(partsFor('all', every, two, ten)).toEqual([
      { clusters: 2, list: two },
      { clusters: 10, list: ten },
    ]);
  });
  it('a part alone, and --only starts only the clustersets its scenarios need', () => {
    expect(partsFor('ten', every, two, ten)).toEqual([{ clusters: 10, list: ten }]);
    expect(partsFor('two', every, two, ten)).toEqual([{ clusters: 2, list: two }]);
    expect(partsFor('all', ['ten-quotas'], two, ten)).toEqual([
      { clusters: 10, list: ['ten-quotas'] },
    ]);
    expect(partsFor('two', ['ten-quotas'], two, ten)).toEqual([]);
  });
});

describe('sourcesKey (the ten-cluster merge compare)', () => {
  it('is independent of order and ignores sources with no address', () => {
    const a = new Map([
      ['c2', ['10.2.100.2', '10.2.100.1']],
      ['c1', ['10.1.100.1']],
      ['c3', []],
    ]);
    const b = new Map([
      ['c1', ['10.1.100.1']],
      ['c2', ['10.2.100.1', '10.2.100.2']],
    ]);
    expect(sourcesKey(a)).toBe('c1=10.1.100.1;c2=10.2.100.1,10.2.100.2');
    expect(sourcesKey(a)).toBe(sourcesKey(b));
    expect(sourcesKey(new Map([['c1', ['10.1.100.2']]]))).not.toBe(sourcesKey(b));
  });
});
