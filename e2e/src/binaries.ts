import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { controlPlaneBuildScript } from './paths.js';
import type { Progress } from './log.js';

export const controlPlaneBinaries = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;
export type ControlPlaneBinary = (typeof controlPlaneBinaries)[number];

/**
 * Returns the directory holding the control-plane binaries. Runs e2e/controlplane/build.sh,
 * which returns at once when the versioned cache is warm and otherwise builds from the Go
 * module proxy (minutes); its progress lines are forwarded to `progress`.
 */
export async function ensureControlPlaneBinaries(
  progress: Progress,
  binDir?: string,
): Promise<string> {
  const dir = binDir ?? lastLine(await runBuildScript(controlPlaneBuildScript(), progress));
  for (const b of controlPlaneBinaries) {
    if (!existsSync(join(dir, b))) throw new Error(`control-plane binary ${b} missing in ${dir}`);
  }
  return dir;
}

const lastLine = (out: string): string => out.trim().split('\n').pop() ?? '';

/** Runs a build script; resolves with its stdout, forwarding its stderr lines to `progress`. */
export function runBuildScript(script: string, progress: Progress): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let pending = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') progress(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending.trim() !== '') progress(pending);
      if (code === 0) resolve(out);
      else reject(new Error(`${script} failed with exit code ${code}`));
    });
  });
}
