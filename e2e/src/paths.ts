import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest ancestor of this module holding pnpm-workspace.yaml. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (pnpm-workspace.yaml)');
    dir = parent;
  }
}

export const crdDir = (): string => join(repoRoot(), 'deploy', 'crds');
export const kwokStagesFile = (): string => join(repoRoot(), 'e2e', 'kwok', 'stages.yaml');
export const controlPlaneBuildScript = (): string =>
  join(repoRoot(), 'e2e', 'controlplane', 'build.sh');
export const emulatorCli = (): string =>
  join(repoRoot(), 'packages', 'cloudmap-emulator', 'dist', 'src', 'cli.js');
export const nodesDir = (): string => join(repoRoot(), 'e2e', 'nodes');
