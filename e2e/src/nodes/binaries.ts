import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runBuildScript } from '../binaries.js';
import type { Progress } from '../log.js';
import { nodesDir } from '../paths.js';

export const nodeBinaryNames = [
  'kubelet',
  'kube-proxy',
  'coredns',
  'pause',
  'echo',
  'connect-proxy',
  'nc',
] as const;
export type NodeBinaries = Record<(typeof nodeBinaryNames)[number], string>;

/** Parses build.sh's `name=path` lines; every node binary must be named and exist. */
export function parseNodeBinaries(out: string): NodeBinaries {
  const found = new Map<string, string>();
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) found.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const bins = {} as Record<string, string>;
  for (const name of nodeBinaryNames) {
    const path = found.get(name);
    if (path === undefined) throw new Error(`e2e/nodes/build.sh did not name ${name}`);
    bins[name] = path;
  }
  return bins as NodeBinaries;
}

/** Builds (or reuses from the cache) kubelet, kube-proxy, CoreDNS and the harness's programs. */
export async function ensureNodeBinaries(progress: Progress): Promise<NodeBinaries> {
  const bins = parseNodeBinaries(await runBuildScript(join(nodesDir(), 'build.sh'), progress));
  for (const [name, path] of Object.entries(bins)) {
    if (!existsSync(path)) throw new Error(`node binary ${name} missing at ${path}`);
  }
  return bins;
}
