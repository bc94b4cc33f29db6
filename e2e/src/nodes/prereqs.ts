import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { nodesDir } from '../paths.js';

/** Whether this machine can run real nodes, and if not, the one-line reason. */
export type RealNodeSupport =
  { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Real nodes need root (network namespaces, cgroups, mounts), Linux cgroups and the Debian
 * packages e2e/nodes/packages.sh installs. With `install`, missing packages are installed
 * (as root); otherwise only checked.
 */
export function realNodeSupport(install: boolean): RealNodeSupport {
  if (process.platform !== 'linux') return { ok: false, reason: 'real nodes need Linux' };
  if (process.getuid?.() !== 0) {
    return { ok: false, reason: 'real nodes need root (network namespaces, cgroups, mounts)' };
  }
  if (!existsSync('/sys/fs/cgroup')) return { ok: false, reason: 'no /sys/fs/cgroup' };
  const script = join(nodesDir(), 'packages.sh');
  const r = spawnSync('bash', install ? [script] : [script, '--check'], { encoding: 'utf8' });
  if (r.status !== 0) {
    const said = (r.stderr || r.stdout).trim().split('\n').pop() ?? '';
    return { ok: false, reason: said || `${script} exited with ${r.status}` };
  }
  return { ok: true };
}
