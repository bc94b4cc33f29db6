import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Host operations for real nodes: network namespaces, cgroups, mounts and processes. Every
 * operation names exactly what the harness created (its own netns names, cgroup roots and
 * directories); nothing here touches the host's own network configuration.
 */

/** Runs a command and returns stdout; throws with the command's stderr on failure. */
export function run(cmd: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(cmd, [...args], {
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(input !== undefined ? { input } : {}),
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${(e.stderr ?? '').trim() || e.message}`, {
      cause: err,
    });
  }
}

const netnsDir = '/run/netns';
export const netnsPath = (name: string): string => join(netnsDir, name);
export const netnsExists = (name: string): boolean => existsSync(netnsPath(name));

export function listNetns(prefix: string): string[] {
  if (!existsSync(netnsDir)) return [];
  return readdirSync(netnsDir).filter((n) => n.startsWith(prefix));
}

/** `ip` inside the named network namespace. */
export const ipIn = (netns: string, ...args: string[]): string => run('ip', ['-n', netns, ...args]);

/** A sysctl inside the named network namespace (only net.* sysctls are per namespace). */
export function netnsSysctl(netns: string, key: string, value: string): void {
  run('nsenter', [
    `--net=${netnsPath(netns)}`,
    '--',
    'sh',
    '-c',
    `echo ${value} > /proc/sys/${key.replaceAll('.', '/')}`,
  ]);
}

export function addNetns(name: string): void {
  if (!netnsExists(name)) run('ip', ['netns', 'add', name]);
  ipIn(name, 'link', 'set', 'lo', 'up');
}

export function deleteNetns(name: string): void {
  if (netnsExists(name)) run('ip', ['netns', 'delete', name]);
}

/** The inode that identifies a network namespace (as /proc/<pid>/ns/net shows it). */
function netnsInode(name: string): number | undefined {
  try {
    return statSync(netnsPath(name)).ino;
  } catch {
    return undefined;
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((p) => p !== process.pid);
}

/** Processes whose network namespace is `netns`. */
export function processesInNetns(netns: string): number[] {
  const ino = netnsInode(netns);
  if (ino === undefined) return [];
  return pids().filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/net`) === `net:[${ino}]`;
    } catch {
      return false;
    }
  });
}

// cgroup v1 (one hierarchy per controller, plus the named systemd and the unified one) or v2
// (one hierarchy): the kubelet's cgroupRoot gets a directory in each.
const cgroupBase = '/sys/fs/cgroup';
function hierarchies(): string[] {
  if (existsSync(join(cgroupBase, 'cgroup.controllers'))) return [cgroupBase];
  return readdirSync(cgroupBase, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.isSymbolicLink())
    .map((e) => join(cgroupBase, e.name));
}

/** Creates `/<name>` in every cgroup hierarchy (cpuset gets its parent's cpus and mems). */
export function createCgroupRoot(name: string): void {
  for (const h of hierarchies()) {
    const dir = join(h, name);
    if (!existsSync(dir)) run('mkdir', [dir]);
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = join(h, f);
      if (existsSync(parent) && readFileSync(join(dir, f), 'utf8').trim() === '') {
        run('sh', ['-c', `cat ${parent} > ${join(dir, f)}`]);
      }
    }
  }
}

/** Processes in the cgroup `/<name>` or below, in any hierarchy. */
export function processesInCgroup(name: string): number[] {
  const found = new Set<number>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    const procs = join(dir, 'cgroup.procs');
    if (existsSync(procs)) {
      for (const l of readFileSync(procs, 'utf8').split('\n')) if (l.trim()) found.add(Number(l));
    }
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
    }
  };
  for (const h of hierarchies()) walk(join(h, name));
  return [...found];
}

/** Removes `/<name>` and everything below it from every hierarchy (deepest first). */
export function removeCgroupRoot(name: string): string[] {
  const failed: string[] = [];
  const remove = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) remove(join(dir, e.name));
    }
    try {
      rmdirSync(dir);
    } catch {
      failed.push(dir);
    }
  };
  for (const h of hierarchies()) remove(join(h, name));
  return failed;
}

/** Mount points at or below `dir` (from this process's mount table), deepest first. */
export function mountsUnder(dir: string): string[] {
  const unescape = (s: string): string =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => unescape(l.split(' ')[4] ?? ''))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or below `dir`; returns what is still mounted. */
export function unmountUnder(dir: string): string[] {
  for (let round = 0; round < 5; round++) {
    const mounts = mountsUnder(dir);
    if (mounts.length === 0) return [];
    for (const m of mounts) {
      try {
        run('umount', [m]);
      } catch {
        try {
          run('umount', ['-l', m]);
        } catch {
          // retried next round
        }
      }
    }
  }
  return mountsUnder(dir);
}

/** SIGKILLs the given pids and waits (up to 5 s) until they are gone. */
export async function killAll(list: () => number[]): Promise<number[]> {
  for (let round = 0; round < 50; round++) {
    const left = list();
    if (left.length === 0) return [];
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(100);
  }
  return list();
}
