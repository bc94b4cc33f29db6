/** CPU and memory of benchmarked processes from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpuTicksOfStat, parseLoadavg, statusFieldMiB } from './measure.js';

let ticksPerSecond: number | undefined;

/** USER_HZ (clock ticks per second of /proc/<pid>/stat), from getconf; 100 on Linux. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = 100;
    }
    if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

export interface ProcSample {
  readonly cpuSeconds: number;
  readonly rssMiB: number;
  /** Peak RSS since the process started (VmHWM). */
  readonly peakRssMiB: number;
}

export function sampleProcess(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuSeconds: cpuTicksOfStat(stat) / clockTicks(),
    rssMiB: statusFieldMiB(status, 'VmRSS'),
    peakRssMiB: statusFieldMiB(status, 'VmHWM'),
  };
}

export function loadAverage(): [number, number, number] {
  return parseLoadavg(readFileSync('/proc/loadavg', 'utf8'));
}
