/**
 * Small pure helpers for the figures: percentiles, /proc parsing, rates. Unit-tested.
 */

/** Nearest-rank percentile (p in 0..100) of the samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** utime + stime in clock ticks from the text of /proc/<pid>/stat (the comm may hold spaces). */
export function cpuTicksOfStat(stat: string): number {
  const afterComm = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of the full line are 12 and 13 after "pid (comm) ".
  const utime = Number(afterComm[11]);
  const stime = Number(afterComm[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime))
    throw new Error(`unexpected /proc stat line: ${stat.slice(0, 120)}`);
  return utime + stime;
}

/** A `Name:  N kB` field of /proc/<pid>/status in MiB (VmRSS, VmHWM). */
export function statusFieldMiB(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (m === null) throw new Error(`/proc status has no ${field}`);
  return Number(m[1]) / 1024;
}

/** The three load averages from /proc/loadavg. */
export function parseLoadavg(text: string): [number, number, number] {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  return [a ?? Number.NaN, b ?? Number.NaN, c ?? Number.NaN];
}

/** Per-minute rate of each key's growth between two counter snapshots. */
export function perMinute(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
  seconds: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) out[key] = (delta * 60) / seconds;
  }
  return out;
}

/** ours / peer, or undefined when the peer figure is 0 or missing. */
export function ratio(ours: number | undefined, peer: number | undefined): number | undefined {
  if (ours === undefined || peer === undefined || !Number.isFinite(ours) || !Number.isFinite(peer))
    return undefined;
  if (peer === 0) return undefined;
  return ours / peer;
}
