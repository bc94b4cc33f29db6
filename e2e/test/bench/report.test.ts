import { describe, expect, it } from 'vitest';
import { markdown, rowsOf, svgChart, textTable } from '../../src/bench/report.js';
import { mergeReports, type BenchReport, type PhaseResult } from '../../src/bench/results.js';

function result(side: 'ours' | 'peer', scale: number): PhaseResult {
  return {
    side,
    cell: '10x2x2',
    services: 10,
    endpoints: 2,
    clusters: 2,
    unrelatedObjects: 0,
    coldSyncSeconds: 10 * scale,
    propagation: { samples: [1, 2], p50: 1 * scale, p99: 2 * scale },
    newService: { samples: [3], p50: 3 * scale, p99: 3 * scale },
    idle: {
      seconds: 60,
      cloudMapPerMinute: { DiscoverInstances: 100 * scale },
      cloudMapCallsPerMinute: 100 * scale,
      cloudMapPerMinuteByCaller:
        side === 'ours'
          ? {
              'c1-export-agent': 20 * scale,
              'c1-import-agent': 45 * scale,
              'c2-import-agent': 35 * scale,
            }
          : { 'c1-aws-controller': 55 * scale, 'c2-aws-controller': 45 * scale },
      cloudMapWritesPerMinute: 0,
      k8sWritesPerMinute: { leases: 30 },
      k8sWritesPerMinuteExclLeases: 0,
      leaseWritesPerMinute: side === 'ours' ? 30 : 0,
      cpuSecondsPerMinute: 0.5 * scale,
      loadavg: [1, 2, 3],
    },
    processes: [
      {
        cluster: 'c1',
        kind: 'x',
        rssMiB: 50 * scale,
        peakRssMiB: 60 * scale,
        idleCpuSeconds: 1,
        totalCpuSeconds: 2,
      },
      {
        cluster: 'c2',
        kind: 'x',
        rssMiB: 40 * scale,
        peakRssMiB: 45 * scale,
        idleCpuSeconds: 1,
        totalCpuSeconds: 2,
      },
    ],
    loadavgAtStart: [1, 1, 1],
    phaseSeconds: 100,
  };
}

const report: BenchReport = {
  startedAt: '2026-12-01T06:00:00Z',
  command: 'make bench BENCH_MATRIX=10x2x2',
  host: { cpus: 2, node: 'v24', memGiB: 8 },
  settings: { idleSeconds: 60 },
  results: [result('ours', 2), result('peer', 1)],
  failures: [
    {
      side: 'peer',
      cell: '100x2x2',
      error: 'peer did not converge (cold sync) within 600 s:\n  c2: 3/100',
    },
  ],
};

describe('bench report', () => {
  it('rows pair ours and the peer per metric', () => {
    const rows = rowsOf(report.results[0], report.results[1]);
    const rss = rows.find((r) => r.metric === 'RSS, all processes (MiB)')!;
    expect([rss.ours, rss.peer]).toEqual([180, 90]);
    expect(rows.find((r) => r.metric === 'RSS, largest process (MiB)')!.ours).toBe(100);
    const row = (metric: string) => {
      const r = rows.find((x) => x.metric === metric)!;
      return [r.ours, r.peer];
    };
    expect(report.results.map((r) => r.side)).toEqual(['ours', 'peer']);
    const [oursScale, peerScale] = report.results.map((r) => r.coldSyncSeconds / 10);
    expect(row('idle Cloud Map calls/min per cluster (mean)')).toEqual([
      50 * oursScale!,
      50 * peerScale!,
    ]);
    // c1: its export agent and import agent; the AWS controller: one process per cluster.
    expect(row('idle Cloud Map calls/min, busiest cluster')).toEqual([
      65 * oursScale!,
      55 * peerScale!,
    ]);
    expect(row('idle Cloud Map calls/min, busiest importing process')).toEqual([
      45 * oursScale!,
      55 * peerScale!,
    ]);
  });

  it('the text table shows ratios, the load average and failures', () => {
    const text = textTable(report);
    expect(text).toMatch(/idle Cloud Map calls\/min\s+200\s+100\s+2\.00×/);
    expect(text).toMatch(/idle Lease writes\/min\s+30\.0\s+0\.0\s+–/);
    expect(text).toContain('1.00 / 2.00 / 3.00');
    expect(text).toContain('FAILED 100x2x2 peer: peer did not converge');
  });

  it('markdown has the command, the table, the chart and the failures', () => {
    const md = markdown(report, 'benchmarks.svg');
    expect(md).toContain('make bench BENCH_MATRIX=10x2x2');
    expect(md).toContain('| cold sync (s) | 20.0 | 10.0 | 2.00× |');
    expect(md).toContain('![ours vs AWS controller](benchmarks.svg)');
    expect(md).toContain('- 100x2x2 peer: peer did not converge (cold sync) within 600 s:');
  });

  it('conflict figures show as rows of the cell in the markdown and the text table', () => {
    const [ours, peer] = report.results as [PhaseResult, PhaseResult];
    const withConflict: BenchReport = {
      ...report,
      results: [
        { ...ours, conflict: { supported: true, raised: [2, 1, 3], cleared: [0.5, 1.5, 1] } },
        { ...peer, conflict: { supported: false, raised: [], cleared: [], probeSeconds: 30 } },
      ],
    };
    const md = markdown(withConflict, 'b.svg');
    expect(md).toContain('| Conflict raised, all exporters, p50 (s) | 2.00 | not supported | |');
    expect(md).toContain('| Conflict cleared, all exporters, max (s) | 1.50 | not supported | |');
    expect(md).toContain('| Conflict samples | 3 | no condition in 30 s | |');
    expect(textTable(withConflict)).toMatch(
      /Conflict raised, all exporters, max \(s\) +3\.00 +not supported/,
    );
    // Reports from before the conflict phase have no such rows.
    expect(markdown(report, 'b.svg')).not.toContain('Conflict raised');
  });

  it('markdown includes the hand-written notes before the tables', () => {
    const md = markdown(report, 'benchmarks.svg', '## What this run shows\n\nNotes.\n');
    expect(md).toContain('## What this run shows\n\nNotes.');
    expect(md.indexOf('## What this run shows')).toBeLessThan(md.indexOf('| cold sync (s) |'));
    expect(markdown(report, 'benchmarks.svg')).not.toContain('From docs/benchmarks-notes.md');
  });

  it('the SVG scales each panel to its largest bar', () => {
    const svg = svgChart(report);
    expect(svg.startsWith('<svg')).toBe(true);
    // ours is twice the peer in every panel: the longest bar is the full width, the peer half.
    expect(svg).toContain('width="410.0"');
    expect(svg).toContain('width="205.0"');
  });

  it('each process has its own row: RSS, peak, idle CPU per minute and CPU of the phase', () => {
    const text = textTable(report);
    // ours: 50 × 2 MiB, peak 120, 1 CPU s in a 60 s window = 1.00 s/min.
    expect(text).toMatch(/x \(c1\)\s+100\s+120\s+1\.00\s+2\.0/);
    const md = markdown(report, 'benchmarks.svg');
    expect(md).toContain(
      '| process | RSS (MiB) | peak RSS (MiB) | idle CPU s/min | CPU s, whole phase |',
    );
    expect(md).toContain('| x (c2) | 80 | 90 | 1.00 | 2.0 |');
    expect(md).toContain('| idle CPU s/min, busiest process | 1.00 | 1.00 | 1.00× |');
  });

  it('merges runs: the last run with a cell and side wins, failures only where none measured', () => {
    const later: BenchReport = {
      ...report,
      startedAt: '2026-12-01T08:00:00Z',
      command: 'make bench BENCH_MATRIX=100x2x2 BENCH_SIDES=peer',
      results: [{ ...result('peer', 3), cell: '100x2x2' }, result('peer', 4)],
      failures: [],
    };
    const merged = mergeReports([report, later]);
    expect(merged.startedAt).toBe('2026-12-01T06:00:00Z');
    expect(merged.runs?.map((r) => r.command)).toEqual([report.command, later.command]);
    const peer10 = merged.results.find((r) => r.cell === '10x2x2' && r.side === 'peer');
    expect(peer10?.coldSyncSeconds).toBe(40);
    expect(peer10?.runStartedAt).toBe('2026-12-01T08:00:00Z');
    expect(merged.failures).toEqual([]);
    const md = markdown(merged, 'benchmarks.svg');
    expect(md).toContain('Put together from 2 runs');
    expect(md).toContain('make bench BENCH_MATRIX=100x2x2 BENCH_SIDES=peer');
    expect(md).toContain('AWS controller in the run started 2026-12-01T08:00:00Z');
    // Merging the merged report again keeps every run's own command.
    const third = { ...later, startedAt: '2026-12-01T09:00:00Z', command: 'make bench X=3' };
    expect(mergeReports([merged, third]).runs?.map((r) => r.command)).toEqual([
      report.command,
      later.command,
      'make bench X=3',
    ]);
  });

  it('a baseline shows our figures before and now, per cell and per process', () => {
    const md = markdown(
      { ...report, baseline: { label: 'main at abc1234', results: [result('ours', 4)] } },
      'benchmarks.svg',
    );
    expect(md).toContain('## Ours before: main at abc1234');
    // before: 4 × (50 + 40) MiB; now: 2 × (50 + 40).
    expect(md).toContain('| RSS, all processes (MiB) | 360 | 180 | 0.50× |');
    expect(md).toContain('| x (c1) | 200 | 240 | 1.00 | 2.0 |');
  });
});
