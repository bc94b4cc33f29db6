/**
 * Turns phase results into the side-by-side table (ours, peer, ours/peer) printed by
 * `make bench`, the markdown of docs/benchmarks.md and a bar chart as SVG. Pure, unit-tested.
 */
import { conflictRows } from './conflict.js';
import { ratio } from './measure.js';
import type { ProcessKind } from './identities.js';
import type { BenchReport, PhaseResult } from './results.js';
import { cloudMapCallerOf } from './sides.js';

/** The processes that import: ours an import agent, the AWS controller does both. */
const importingKinds: readonly ProcessKind[] = ['import-agent', 'aws-controller'];

export interface Row {
  readonly metric: string;
  readonly ours?: number;
  readonly peer?: number;
  /** Digits after the point. */
  readonly digits: number;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0);
const perMinuteOfIdle = (r: PhaseResult, seconds: number): number =>
  r.idle.seconds > 0 ? (seconds * 60) / r.idle.seconds : Number.NaN;

/** One row per process of both sides: memory and CPU of each agent on its own. */
export function processRows(
  ours: PhaseResult | undefined,
  peer: PhaseResult | undefined,
): string[][] {
  const rows: string[][] = [];
  for (const r of [ours, peer]) {
    if (r === undefined) continue;
    for (const p of r.processes)
      rows.push([
        `${p.kind} (${p.cluster})`,
        fmt(p.rssMiB, 0),
        fmt(p.peakRssMiB, 0),
        fmt(perMinuteOfIdle(r, p.idleCpuSeconds), 2),
        fmt(p.totalCpuSeconds, 1),
      ]);
  }
  return rows;
}

const processHeader = [
  'process',
  'RSS (MiB)',
  'peak RSS (MiB)',
  'idle CPU s/min',
  'CPU s, whole phase',
];
const maxOf = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : Math.max(...xs));

/**
 * The largest per-cluster sum of the idle calls of the callers `pick` assigns to a cluster;
 * NaN for reports without per-caller counts.
 */
function busiest(r: PhaseResult, pick: (caller: string, cluster: string) => boolean): number {
  const byCaller = r.idle.cloudMapPerMinuteByCaller;
  if (byCaller === undefined) return Number.NaN;
  const clusters = [...new Set(r.processes.map((p) => p.cluster))];
  return maxOf(
    clusters.map((c) =>
      sum(
        Object.entries(byCaller)
          .filter(([k]) => pick(k, c))
          .map(([, n]) => n),
      ),
    ),
  );
}

/** The figures compared for one cell, one row each. */
export function rowsOf(ours: PhaseResult | undefined, peer: PhaseResult | undefined): Row[] {
  const both = <T>(f: (r: PhaseResult) => T): { ours?: T; peer?: T } => ({
    ...(ours !== undefined ? { ours: f(ours) } : {}),
    ...(peer !== undefined ? { peer: f(peer) } : {}),
  });
  return [
    { metric: 'cold sync (s)', digits: 1, ...both((r) => r.coldSyncSeconds) },
    { metric: 'endpoint change p50 (s)', digits: 2, ...both((r) => r.propagation.p50) },
    { metric: 'endpoint change p99 (s)', digits: 2, ...both((r) => r.propagation.p99) },
    { metric: 'new service p50 (s)', digits: 1, ...both((r) => r.newService.p50) },
    { metric: 'new service p99 (s)', digits: 1, ...both((r) => r.newService.p99) },
    {
      metric: 'idle Cloud Map calls/min',
      digits: 0,
      ...both((r) => r.idle.cloudMapCallsPerMinute),
    },
    // Every cluster imports (c1 also exports): the side's calls over its clusters, the
    // cluster whose processes call most (c1: its exporter too), and the importing process
    // that calls most (ours: an import agent; the AWS controller does both in one process).
    {
      metric: 'idle Cloud Map calls/min per cluster (mean)',
      digits: 0,
      ...both((r) => r.idle.cloudMapCallsPerMinute / r.clusters),
    },
    {
      metric: 'idle Cloud Map calls/min, busiest cluster',
      digits: 0,
      ...both((r) => busiest(r, (caller, cluster) => caller.startsWith(`${cluster}-`))),
    },
    {
      metric: 'idle Cloud Map calls/min, busiest importing process',
      digits: 0,
      ...both((r) =>
        busiest(r, (caller, cluster) =>
          importingKinds.some((k) => caller === cloudMapCallerOf(cluster, k)),
        ),
      ),
    },
    {
      metric: 'idle Cloud Map writes/min',
      digits: 1,
      ...both((r) => r.idle.cloudMapWritesPerMinute),
    },
    {
      metric: 'idle k8s writes/min (no Leases)',
      digits: 1,
      ...both((r) => r.idle.k8sWritesPerMinuteExclLeases),
    },
    { metric: 'idle Lease writes/min', digits: 1, ...both((r) => r.idle.leaseWritesPerMinute) },
    {
      metric: 'RSS, all processes (MiB)',
      digits: 0,
      ...both((r) => sum(r.processes.map((p) => p.rssMiB))),
    },
    {
      metric: 'RSS, largest process (MiB)',
      digits: 0,
      ...both((r) => maxOf(r.processes.map((p) => p.rssMiB))),
    },
    {
      metric: 'peak RSS, largest process (MiB)',
      digits: 0,
      ...both((r) => maxOf(r.processes.map((p) => p.peakRssMiB))),
    },
    {
      metric: 'idle CPU s/min, all processes',
      digits: 2,
      ...both((r) => r.idle.cpuSecondsPerMinute),
    },
    {
      metric: 'idle CPU s/min, busiest process',
      digits: 2,
      ...both((r) => maxOf(r.processes.map((p) => perMinuteOfIdle(r, p.idleCpuSeconds)))),
    },
    { metric: 'processes', digits: 0, ...both((r) => r.processes.length) },
  ];
}

export const fmt = (n: number | undefined, digits: number): string =>
  n === undefined || !Number.isFinite(n)
    ? '–'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const fmtRatio = (r: Row): string => {
  const x = ratio(r.ours, r.peer);
  return x === undefined ? '–' : `${fmt(x, x < 10 ? 2 : 1)}×`;
};

const beforeAfterMetrics = new Set([
  'cold sync (s)',
  'endpoint change p50 (s)',
  'idle Cloud Map calls/min',
  'RSS, all processes (MiB)',
  'RSS, largest process (MiB)',
  'peak RSS, largest process (MiB)',
  'idle CPU s/min, all processes',
  'idle CPU s/min, busiest process',
]);

const fmtNowBefore = (r: Row): string => {
  const x = ratio(r.peer, r.ours);
  return x === undefined ? '–' : `${fmt(x, x < 10 ? 2 : 1)}×`;
};

/** Cells in the order first measured, with each side's result. */
export function cellsOf(
  report: BenchReport,
): [string, PhaseResult | undefined, PhaseResult | undefined][] {
  const names = [...new Set(report.results.map((r) => r.cell))];
  return names.map((cell) => [
    cell,
    report.results.find((r) => r.cell === cell && r.side === 'ours'),
    report.results.find((r) => r.cell === cell && r.side === 'peer'),
  ]);
}

const loadOf = (r: PhaseResult | undefined): string =>
  r === undefined ? '–' : r.idle.loadavg.map((x) => x.toFixed(2)).join(' / ');

const cellTitle = (r: PhaseResult | undefined, cell: string): string =>
  r === undefined
    ? cell
    : `${r.services.toLocaleString('en-US')} services × ${r.endpoints} endpoints × ${r.clusters} clusters${
        r.exporters !== undefined && r.exporters > 1
          ? ` (exported from ${r.exporters} of the ${r.clusters}, all importing)`
          : ''
      }${
        r.unrelatedObjects > 0
          ? `, ${r.unrelatedObjects.toLocaleString('en-US')} unrelated Services + EndpointSlices per cluster`
          : ''
      }`;

/** Plain-text table for the terminal. */
export function textTable(report: BenchReport): string {
  const out: string[] = [];
  for (const [cell, ours, peer] of cellsOf(report)) {
    const rows = rowsOf(ours, peer);
    out.push(`\n== ${cellTitle(ours ?? peer, cell)}`);
    const table = [
      ['metric', 'ours', 'AWS controller', 'ours/peer'],
      ...rows.map((r) => [r.metric, fmt(r.ours, r.digits), fmt(r.peer, r.digits), fmtRatio(r)]),
      ['load average during idle (1/5/15)', loadOf(ours), loadOf(peer), ''],
      ...conflictRows(ours?.conflict, peer?.conflict).map((r) => [...r, '']),
    ];
    const procs = [processHeader, ...processRows(ours, peer)];
    for (const t of [table, procs]) {
      const widths = t[0]!.map((_, i) => Math.max(...t.map((row) => row[i]!.length)));
      out.push('');
      for (const row of t)
        out.push(
          row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
        );
    }
  }
  for (const f of report.failures) out.push(`\nFAILED ${f.cell} ${f.side}: ${f.error}`);
  return `${out.join('\n')}\n`;
}

const topOperations = (r: PhaseResult | undefined): string =>
  r === undefined
    ? '–'
    : Object.entries(r.idle.cloudMapPerMinute)
        .sort((a, b) => b[1] - a[1])
        .map(([op, n]) => `${op} ${fmt(n, 0)}`)
        .join(', ') || 'none';

/** The static part of docs/benchmarks.md: how to run it and what each figure means. */
const runningIt = [
  '## Running it',
  '',
  '| target | what |',
  '|---|---|',
  '| `make bench` | the default matrix (below), both sides, writes `docs/benchmarks.md`, `docs/benchmarks.svg` and `.state/bench/results.json` |',
  '| `make bench-smoke` | 10 services × 2 endpoints × 2 clusters, 20 s idle, 5 changes (`.ci/run` runs it): figures only |',
  '| `node e2e/dist/src/bench/main.js --render a.json[,b.json...] [--baseline before.json --baseline-label TEXT] --docs` | rewrites this page from saved runs (merged: the last run with a cell and side wins), optionally with our figures before a change; `--out docs/benchmarks.json` keeps the merged JSON; `docs/benchmarks-notes.md` (by hand) is included at the top |',
  '| `make peer` | builds (or reuses) the AWS controller from the Go module proxy (`e2e/peer`), cached in `~/.cache/cloudmap-mcs/aws-mcs-controller/` |',
  '',
  'Options (flag of `node e2e/dist/src/bench/main.js`, or the `BENCH_*` variable):',
  '',
  '| variable | default | |',
  '|---|---|---|',
  '| `BENCH_MATRIX` | `10x2x2,100x2x2,100x2x3,1000x10x2:5000,1000x10x3` | cells `services x endpoints x clusters[/exporting clusters][:unrelated objects per cluster]`, services exported from c1 (or c1..cE with `/E`) |',
  '| `BENCH_SIDES` | `ours,peer` | which sides run |',
  '| `BENCH_IDLE_SECONDS` | 120 | idle window (after cold sync and 10 s of settling) |',
  '| `BENCH_CHANGES` | 20 | endpoint changes timed, one after the other |',
  '| `BENCH_NEW_SERVICES` | 3 | new exports timed |',
  "| `BENCH_CONFLICTS` | 5 | port conflicts timed: a service exported from c1 and c2, c2's port changed and reverted; ours until every exporter's ServiceExport says `Conflict=True` (then `False`), the AWS controller watched 30 s for any Conflict condition |",
  '| `BENCH_UNRELATED` | 0 | Services + EndpointSlices nothing exports, created in every cluster first (memory) |',
  '| `BENCH_CONVERGE_TIMEOUT_SECONDS` | 300 + 3 × services | a side that has not imported everything by then fails the run |',
  '| `BENCH_CHANGE_TIMEOUT_SECONDS` | 180 | the same for one change or new service |',
  '',
  "What the figures are: cold sync runs from the processes' start until every service shows",
  'exactly its addresses in the imported EndpointSlices of every cluster (the exporting one',
  'too); an endpoint change replaces one address of one EndpointSlice in c1 (with `/E`, in one',
  'of c1..cE picked at random) and waits until',
  'every cluster shows the new set (p99 is nearest-rank: with 20 changes, the slowest);',
  "Cloud Map calls are the emulator's counts (one emulator per side); Kubernetes writes come",
  "from the API servers' audit logs, by the identity each process runs as; RSS is VmRSS at",
  'the end of the idle window, peak RSS is VmHWM; CPU is utime + stime over the idle window.',
  'Our agents run with leader election on (their default), so they renew a Lease; the AWS',
  'controller cannot elect a leader outside a pod, hence Leases in their own row.',
  '',
];

/** The markdown of docs/benchmarks.md. */
export function markdown(report: BenchReport, svgFile: string, notes?: string): string {
  const out: string[] = [
    '# Benchmarks: our agents vs the AWS Cloud Map MCS controller',
    '',
    '<!-- Generated by `make bench` (e2e/src/bench); do not edit by hand. -->',
    '',
    `Run ${report.startedAt} on ${report.host.cpus} CPUs, ${report.host.memGiB.toFixed(1)} GiB, Node ${report.host.node};`,
    `both sides in the same run, one after the other, each on a fresh harness clusterset and emulator.`,
    'How it measures, and why: [ADR 0009](adr/0009-benchmark-method.md). Reproduce:',
    '',
    '```sh',
    ...(report.runs ?? [{ command: report.command }]).map((r) => r.command),
    '```',
    '',
    ...(report.runs === undefined
      ? []
      : [
          `Put together from ${report.runs.length} runs (started ${report.runs.map((r) => r.startedAt).join(', ')}); each cell says which run measured each side.`,
          '',
        ]),
    `Settings: ${Object.entries(report.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    `![ours vs AWS controller](${svgFile})`,
    '',
    ...(notes === undefined
      ? []
      : [
          '<!-- From docs/benchmarks-notes.md (written by hand, kept across runs). -->',
          '',
          notes.trimEnd(),
          '',
        ]),
  ];
  for (const [cell, ours, peer] of cellsOf(report)) {
    out.push(`## ${cellTitle(ours ?? peer, cell)}`, '');
    out.push('| | ours (defaults) | AWS controller v0.3.1 | ours/peer |', '|---|---:|---:|---:|');
    for (const r of rowsOf(ours, peer))
      out.push(
        `| ${r.metric} | ${fmt(r.ours, r.digits)} | ${fmt(r.peer, r.digits)} | ${fmtRatio(r)} |`,
      );
    out.push(
      `| load average at end of idle (1/5/15 min) | ${loadOf(ours)} | ${loadOf(peer)} | |`,
      ...conflictRows(ours?.conflict, peer?.conflict).map((r) => `| ${r.join(' | ')} | |`),
      '',
    );
    out.push(
      `Idle Cloud Map calls/min by operation — ours: ${topOperations(ours)}; AWS controller: ${topOperations(peer)}.`,
      '',
    );
    const measured = [ours, peer]
      .filter((r): r is PhaseResult => r?.runStartedAt !== undefined)
      .map(
        (r) =>
          `${r.side === 'ours' ? 'ours' : 'AWS controller'} in the run started ${r.runStartedAt}`,
      );
    if (measured.length > 0) out.push(`Measured: ${measured.join('; ')}.`, '');
    out.push(
      `| ${processHeader.join(' | ')} |`,
      `|---|${processHeader
        .slice(1)
        .map(() => '---:')
        .join('|')}|`,
      ...processRows(ours, peer).map((row) => `| ${row.join(' | ')} |`),
      '',
    );
  }
  const before = report.baseline;
  if (before !== undefined) {
    out.push(`## Ours before: ${before.label}`, '');
    out.push(
      'The same cells, measured the same way by `make bench`, before the change; per process.',
      '',
    );
    for (const [cell, ours] of cellsOf(report)) {
      const then = before.results.find((r) => r.cell === cell && r.side === 'ours');
      if (then === undefined) continue;
      out.push(`### ${cellTitle(then, cell)}`, '');
      out.push('| | before | now | now/before |', '|---|---:|---:|---:|');
      for (const r of rowsOf(then, ours).filter((x) => beforeAfterMetrics.has(x.metric)))
        // rowsOf's "ours" is the baseline here and its "peer" the current run.
        out.push(
          `| ${r.metric} | ${fmt(r.ours, r.digits)} | ${fmt(r.peer, r.digits)} | ${fmtNowBefore(r)} |`,
        );
      out.push(
        `| load average at end of idle (1/5/15 min) | ${loadOf(then)} | ${loadOf(ours)} | |`,
        '',
      );
      out.push(
        `| ${processHeader.join(' | ')} |`,
        `|---|${processHeader
          .slice(1)
          .map(() => '---:')
          .join('|')}|`,
        ...processRows(then, undefined).map((row) => `| ${row.join(' | ')} |`),
        '',
      );
    }
  }
  out.push(...runningIt);
  if (report.failures.length > 0) {
    out.push('## Failures', '');
    for (const f of report.failures) out.push(`- ${f.cell} ${f.side}: ${f.error.split('\n')[0]}`);
    out.push('');
  }
  return out.join('\n');
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Grouped horizontal bars, one panel per metric, one pair of bars (ours, peer) per cell,
 * each panel scaled to its own maximum.
 */
export function svgChart(report: BenchReport): string {
  const metrics: { title: string; pick: (r: PhaseResult) => number; digits: number }[] = [
    { title: 'idle Cloud Map calls/min', pick: (r) => r.idle.cloudMapCallsPerMinute, digits: 0 },
    {
      title: 'RSS of all processes (MiB)',
      pick: (r) => sum(r.processes.map((p) => p.rssMiB)),
      digits: 0,
    },
    {
      title: 'RSS of the largest process (MiB)',
      pick: (r) => maxOf(r.processes.map((p) => p.rssMiB)),
      digits: 0,
    },
    { title: 'idle CPU s/min', pick: (r) => r.idle.cpuSecondsPerMinute, digits: 2 },
    { title: 'cold sync (s)', pick: (r) => r.coldSyncSeconds, digits: 1 },
    { title: 'endpoint change p50 (s)', pick: (r) => r.propagation.p50, digits: 2 },
  ];
  const cells = cellsOf(report);
  const barH = 12;
  const label = 150;
  const width = 640;
  const barMax = width - label - 80;
  const colors = { ours: '#2b7bb9', peer: '#d9822b' };
  const parts: string[] = [];
  let y = 30;
  parts.push(
    `<rect x="${label}" y="8" width="10" height="10" fill="${colors.ours}"/><text x="${label + 14}" y="17">ours</text>`,
    `<rect x="${label + 70}" y="8" width="10" height="10" fill="${colors.peer}"/><text x="${label + 84}" y="17">AWS controller</text>`,
  );
  for (const m of metrics) {
    parts.push(`<text x="4" y="${y + 12}" font-weight="bold">${escapeXml(m.title)}</text>`);
    y += 18;
    const values = cells
      .flatMap(([, o, p]) => [o, p])
      .filter((r): r is PhaseResult => r !== undefined);
    const max = Math.max(1e-9, ...values.map(m.pick).filter(Number.isFinite));
    for (const [cell, ours, peer] of cells) {
      parts.push(`<text x="4" y="${y + barH + 2}">${escapeXml(cell)}</text>`);
      for (const [side, r] of [
        ['ours', ours],
        ['peer', peer],
      ] as const) {
        const v = r === undefined ? Number.NaN : m.pick(r);
        const w = Number.isFinite(v) ? Math.max(1, (v / max) * barMax) : 0;
        parts.push(
          `<rect x="${label}" y="${y}" width="${w.toFixed(1)}" height="${barH - 2}" fill="${colors[side]}"/>`,
          `<text x="${(label + w + 4).toFixed(1)}" y="${y + barH - 3}">${escapeXml(Number.isFinite(v) ? v.toFixed(m.digits) : 'n/a')}</text>`,
        );
        y += barH;
      }
      y += 4;
    }
    y += 8;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
