/** The figures of one benchmark phase (one side on one matrix cell), as written to JSON. */
import type { ConflictFigures } from './conflict.js';
import type { Side } from './sides.js';

export interface ProcessFigures {
  readonly cluster: string;
  readonly kind: string;
  /** RSS at the end of the idle window. */
  readonly rssMiB: number;
  /** Peak RSS over the whole phase (VmHWM). */
  readonly peakRssMiB: number;
  readonly idleCpuSeconds: number;
  /** CPU from start to the end of the phase (cold sync, idle, changes). */
  readonly totalCpuSeconds: number;
}

export interface LatencyFigures {
  /** Seconds, in the order measured. */
  readonly samples: number[];
  readonly p50: number;
  readonly p99: number;
}

export interface IdleFigures {
  readonly seconds: number;
  /** Cloud Map calls per minute by operation, all clusters of the side together. */
  readonly cloudMapPerMinute: Record<string, number>;
  readonly cloudMapCallsPerMinute: number;
  /**
   * Calls per minute by caller, `<cluster>-<process kind>` (`cloudMapCallerOf`); absent in
   * reports written before 2026-12-02.
   */
  readonly cloudMapPerMinuteByCaller?: Record<string, number>;
  readonly cloudMapWritesPerMinute: number;
  /** Kubernetes write requests per minute by resource (audit log), all clusters. */
  readonly k8sWritesPerMinute: Record<string, number>;
  readonly k8sWritesPerMinuteExclLeases: number;
  readonly leaseWritesPerMinute: number;
  /** CPU seconds per minute of all the side's processes together. */
  readonly cpuSecondsPerMinute: number;
  /** /proc/loadavg (1, 5, 15 min) at the end of the window. */
  readonly loadavg: [number, number, number];
}

export interface PhaseResult {
  readonly side: Side;
  readonly cell: string;
  readonly services: number;
  readonly endpoints: number;
  readonly clusters: number;
  /** Clusters exporting every service (`NxMxK/E`); absent: 1 (c1). */
  readonly exporters?: number;
  readonly unrelatedObjects: number;
  readonly coldSyncSeconds: number;
  readonly propagation: LatencyFigures;
  readonly newService: LatencyFigures;
  readonly idle: IdleFigures;
  readonly processes: ProcessFigures[];
  /** Conflict raised and cleared between two exporters; absent in reports before 2026-12-06. */
  readonly conflict?: ConflictFigures;
  /** When the run that measured this phase started (set when reports are merged). */
  readonly runStartedAt?: string;
  readonly loadavgAtStart: [number, number, number];
  readonly phaseSeconds: number;
}

export interface PhaseFailure {
  readonly side: Side;
  readonly cell: string;
  readonly error: string;
}

export interface BenchReport {
  readonly startedAt: string;
  readonly command: string;
  readonly host: { readonly cpus: number; readonly node: string; readonly memGiB: number };
  readonly settings: Record<string, number | string>;
  readonly results: PhaseResult[];
  readonly failures: PhaseFailure[];
  /** The runs a merged report was put together from (`--render a.json,b.json`). */
  readonly runs?: { readonly startedAt: string; readonly command: string }[];
  /** Our side as measured before a change, shown next to the figures (`--baseline`). */
  readonly baseline?: { readonly label: string; readonly results: PhaseResult[] };
}

/**
 * One report from several runs (a long matrix measured in parts): for each cell and side
 * the result of the last run that has it, tagged with that run's start; a failure only
 * where no run has a result.
 */
export function mergeReports(reports: readonly BenchReport[]): BenchReport {
  if (reports.length === 0) throw new Error('no report to merge');
  if (reports.length === 1) return reports[0]!;
  const byKey = new Map<string, PhaseResult>();
  for (const r of reports)
    for (const res of r.results)
      byKey.set(`${res.cell} ${res.side}`, {
        ...res,
        runStartedAt: res.runStartedAt ?? r.startedAt,
      });
  const failures = new Map<string, PhaseFailure>();
  for (const r of reports)
    for (const f of r.failures)
      if (!byKey.has(`${f.cell} ${f.side}`)) failures.set(`${f.cell} ${f.side}`, f);
  const last = reports.at(-1)!;
  return {
    ...last,
    startedAt: reports.map((r) => r.startedAt).sort()[0]!,
    results: [...byKey.values()],
    failures: [...failures.values()],
    // A merged report brings its own runs (its `command` is only its last run's).
    runs: reports.flatMap((r) => r.runs ?? [{ startedAt: r.startedAt, command: r.command }]),
  };
}
