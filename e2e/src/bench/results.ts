/** The figures of one benchmark phase (one side on one matrix cell), as written to JSON. */
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
  readonly unrelatedObjects: number;
  readonly coldSyncSeconds: number;
  readonly propagation: LatencyFigures;
  readonly newService: LatencyFigures;
  readonly idle: IdleFigures;
  readonly processes: ProcessFigures[];
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
}
