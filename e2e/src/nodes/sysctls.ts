import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The kubelet sets three host-wide sysctls at start (kernel.panic=10, kernel.panic_on_oops=1,
 * vm.overcommit_memory=1; `protectKernelDefaults: true` would make it refuse to start instead).
 * The first real node on the host records the values it found; the teardown that leaves no
 * kubelet running on the host writes them back. Several clustersets may overlap: the record is
 * created once (exclusive create) and only the last kubelet's teardown restores it.
 */
export const kubeletSysctls = ['kernel/panic', 'kernel/panic_on_oops', 'vm/overcommit_memory'];

export interface SysctlHost {
  /** Where the sysctls live (/proc/sys). */
  readonly procSys: string;
  /** The record of the values before the first kubelet. */
  readonly recordFile: string;
  /** True while any kubelet runs on the host. */
  readonly kubeletRunning: () => boolean;
}

const anyKubelet = (): boolean =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .some((p) => {
      try {
        // A killed kubelet may linger as a zombie until PID 1 reaps it: that one is gone.
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'kubelet' && state !== 'Z';
      } catch {
        return false;
      }
    });

export const hostSysctls: SysctlHost = {
  procSys: '/proc/sys',
  recordFile: join(tmpdir(), 'cloudmap-mcs-kubelet-sysctls.json'),
  kubeletRunning: anyKubelet,
};

/** Before a kubelet starts: records the current values unless a record exists. */
export function recordSysctls(host: SysctlHost = hostSysctls): void {
  if (existsSync(host.recordFile) || host.kubeletRunning()) return;
  const values = Object.fromEntries(
    kubeletSysctls.map((k) => [k, readFileSync(join(host.procSys, k), 'utf8').trim()]),
  );
  try {
    writeFileSync(host.recordFile, `${JSON.stringify(values)}\n`, { flag: 'wx' });
  } catch {
    // another clusterset recorded them first
  }
}

/** After a teardown: restores the recorded values once no kubelet runs. Returns what it wrote. */
export function restoreSysctls(host: SysctlHost = hostSysctls): Record<string, string> {
  if (!existsSync(host.recordFile) || host.kubeletRunning()) return {};
  const values = JSON.parse(readFileSync(host.recordFile, 'utf8')) as Record<string, string>;
  for (const [key, value] of Object.entries(values)) {
    if (kubeletSysctls.includes(key)) writeFileSync(join(host.procSys, key), `${value}\n`);
  }
  rmSync(host.recordFile, { force: true });
  return values;
}
