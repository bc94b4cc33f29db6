import { describe, expect, it } from 'vitest';
import { markdown, rowsOf, svgChart, textTable } from '../../src/bench/report.js';
import type { BenchReport, PhaseResult } from '../../src/bench/results.js';

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

  it('the SVG scales each panel to its largest bar', () => {
    const svg = svgChart(report);
    expect(svg.startsWith('<svg')).toBe(true);
    // ours is twice the peer in every panel: the longest bar is the full width, the peer half.
    expect(svg).toContain('width="410.0"');
    expect(svg).toContain('width="205.0"');
  });
});
