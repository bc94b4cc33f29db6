import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process the harness started, as recorded in its pid file. */
export interface ProcessRecord {
  readonly name: string;
  readonly pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22); guards against pid reuse. */
  readonly startTicks: string;
  readonly pidFile: string;
}

export interface SpawnOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly pidFile: string;
  readonly env?: Record<string, string>;
  /** `env` only, nothing inherited from this process (an agent as a Pod runs it). */
  readonly cleanEnv?: boolean;
  readonly cwd?: string;
  /** Own session, survives the parent (the CLI); otherwise killed when the parent exits. */
  readonly detached: boolean;
}

export function startTicksOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); field 22 is starttime.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** True while the recorded process (same pid and start time) exists and is not a zombie. */
export function isRunning(record: Pick<ProcessRecord, 'pid' | 'startTicks'>): boolean {
  return startTicksOf(record.pid) === record.startTicks;
}

const attached = new Set<number>();
let exitHookInstalled = false;
function killAttachedOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of attached) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * A child a test started itself (an agent under test): SIGKILLed when this process exits, so a
 * test file that ends without stopping it (a timed-out test, a failed hook) leaves nothing
 * running. Forgotten once the child exits, so a recycled pid is never signalled.
 */
export function killOnExit(child: {
  pid?: number | undefined;
  once(e: 'exit', l: () => void): unknown;
}): void {
  const pid = child.pid;
  if (pid === undefined) return;
  killAttachedOnExit();
  attached.add(pid);
  child.once('exit', () => attached.delete(pid));
}

export function spawnProcess(opts: SpawnOptions): ProcessRecord {
  const log = openSync(opts.logFile, 'a');
  try {
    const child = spawn(opts.command, [...opts.args], {
      cwd: opts.cwd,
      env: opts.cleanEnv === true ? { ...opts.env } : { ...process.env, ...opts.env },
      stdio: ['ignore', log, log],
      detached: opts.detached,
    });
    if (child.pid === undefined) throw new Error(`failed to start ${opts.name} (${opts.command})`);
    child.on('error', () => {});
    if (opts.detached) child.unref();
    else {
      attached.add(child.pid);
      child.once('exit', () => attached.delete(child.pid ?? -1));
      killAttachedOnExit();
    }
    const startTicks = startTicksOf(child.pid) ?? '';
    writeFileSync(opts.pidFile, `${child.pid}\n${startTicks}\n${opts.name}\n`);
    return { name: opts.name, pid: child.pid, startTicks, pidFile: opts.pidFile };
  } finally {
    closeSync(log);
  }
}

export function readPidFile(pidFile: string): ProcessRecord | undefined {
  if (!existsSync(pidFile)) return undefined;
  const [pid, startTicks, name] = readFileSync(pidFile, 'utf8').split('\n');
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return undefined;
  return { name: name ?? pidFile, pid: n, startTicks: startTicks ?? '', pidFile };
}

/**
 * Every pid file under `dir` (recursively, in `pids/` directories). A real node's containerd
 * and kubelet trees are not walked: they hold container root filesystems (a Debian-based image
 * has `/var/run -> /run`, which `readdirSync({ recursive: true })` followed into the host's
 * /run, where containerd's runtime directories vanish mid-walk) and never a pid file of ours.
 * Symbolic links are not followed; a directory removed during the walk is skipped.
 */
export function findPidFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (!(basename(d) === 'node' && (entry.name === 'containerd' || entry.name === 'kubelet')))
          walk(path);
      } else if (entry.isFile() && entry.name.endsWith('.pid')) found.push(path);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

/**
 * SIGTERM, then SIGKILL after `graceMs`; resolves once every process is gone. Pid files of
 * stopped processes are removed. Returns the records that could not be stopped.
 */
export async function stopProcesses(
  records: readonly ProcessRecord[],
  graceMs = 10_000,
): Promise<ProcessRecord[]> {
  const signal = (r: ProcessRecord, s: NodeJS.Signals): void => {
    if (!isRunning(r)) return;
    try {
      process.kill(r.pid, s);
    } catch {
      // exited meanwhile
    }
  };
  for (const r of records) signal(r, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (records.some(isRunning) && Date.now() < deadline) await sleep(100);
  for (const r of records) signal(r, 'SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (records.some(isRunning) && Date.now() < killDeadline) await sleep(100);
  const left = records.filter(isRunning);
  for (const r of records) if (!left.includes(r)) rmSync(r.pidFile, { force: true });
  return left;
}
