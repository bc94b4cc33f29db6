/**
 * How every launcher runs an agent as a process: its one-file bundle
 * (packages/<agent>/dist/bundle/main.mjs, built by tools/bundle.mjs), with source maps on so
 * stack traces name the TypeScript sources. The images run the same file the same way
 * (Dockerfile.export / Dockerfile.import), so tests exercise what ships.
 *
 * `make build` writes the bundles; a developer who only ran `tsc --build` gets them rebuilt
 * here when the compiled JavaScript is newer (esbuild takes about a second), so a process
 * test never runs yesterday's code.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

export type AgentPackage = 'export-agent' | 'import-agent';

export const agentBundle = (agent: AgentPackage): string =>
  join(repoRoot(), 'packages', agent, 'dist', 'bundle', 'main.mjs');

/** The newest modification time of a .js file under `dir` (0 when there is none). */
function newestJs(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.js')) continue;
    newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/** Rebuilds the agent's bundle when it is missing or older than the compiled code it bundles. */
export function ensureAgentBundle(agent: AgentPackage): string {
  const bundle = agentBundle(agent);
  const compiled = join(repoRoot(), 'packages', agent, 'dist', 'src', 'main.js');
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: build first (make build)`);
  const inputs = Math.max(
    newestJs(join(repoRoot(), 'packages', agent, 'dist', 'src')),
    newestJs(join(repoRoot(), 'packages', 'core', 'dist', 'src')),
  );
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < inputs)
    execFileSync(process.execPath, [join(repoRoot(), 'tools', 'bundle.mjs'), agent], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  return bundle;
}

/**
 * The `node` options every agent runs with, here and in the images' entry points
 * (Dockerfile.export / Dockerfile.import, checked by deploy/test/image.test.ts):
 * - source maps on, for TypeScript stack traces (the map covers our code only);
 * - a young generation of at most 4 MiB per semi-space. Node 24 sizes it from the host's
 *   memory, and under an agent's steady allocation it grew to 128 MiB of new space for a few
 *   MiB of live young objects;
 * - V8's `--optimize-for-size` (slower heap growth, smaller young generation): the agents
 *   wait on the network, and it kept the committed heap close to the live one.
 * - no V8 background tasks (`--single-threaded`): Node 24 can deadlock in process.exit when a
 *   background compile job (Sparkplug or Maglev, both seen with gdb) waits for a GC that the
 *   exiting main thread never runs: NodePlatform::Shutdown joins that worker forever, and the
 *   agent never exits on SIGTERM. The small young generation above makes such GC requests
 *   frequent. Compilation and GC then run on the main thread, which idle agents do not notice.
 * Measured in docs/adr/0016-agent-memory.md (decision 5) and docs/benchmarks.md.
 */
export const agentNodeOptions: readonly string[] = [
  '--enable-source-maps',
  '--max-semi-space-size=4',
  '--optimize-for-size',
  '--single-threaded',
];

/**
 * The environment every agent runs with, here and in the images (`ENV` in the Dockerfiles):
 * glibc serves allocations of 16 KiB and more with their own mappings, returned to the
 * system when freed. Without it, V8's parser zones for the one 3 MB bundle module (17.5 MiB
 * at peak, measured with heaptrack) stay in the brk heap for good, fragmented under
 * longer-lived allocations: 26 MiB of RSS, 4 MiB with it. glibc reads it only at start, so
 * it cannot be set from inside the agent. docs/adr/0016-agent-memory.md (decision 8;
 * `MALLOC_ARENA_MAX=2` was measured and not adopted, decision 13).
 */
export const agentEnvironment: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '16384',
};

/** The `node` arguments that start the agent: `[...agentNodeArgs(agent), ...agentFlags]`. */
export function agentNodeArgs(agent: AgentPackage): string[] {
  return [...agentNodeOptions, ensureAgentBundle(agent)];
}
