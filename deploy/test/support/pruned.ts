// The agents' production trees as the images carry them (deploy/docker/prune.sh, the script
// the Dockerfiles run), and a way to start them as the image does: non-root (65532), with the
// tree mounted read-only, no HOME, cwd outside the repository.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentNodeOptions } from '@cloudmap-mcs/e2e';
import { deployDir } from './helm.js';

export type Agent = 'export-agent' | 'import-agent';

export interface PrunedTrees {
  readonly root: string;
  readonly node: string;
  dir(agent: Agent): string;
  cleanup(): void;
}

/** Runs prune.sh for each agent into one world-readable temp root (with a copy of node). */
export function pruneAgents(agents: readonly Agent[]): PrunedTrees {
  const root = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-pruned-'));
  chmodSync(root, 0o755);
  // The toolchain's node lives under /root; the non-root user gets its own copy.
  const node = join(root, 'node');
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  try {
    for (const agent of agents) {
      // As the Dockerfiles call it: with the target architecture (here, this machine's).
      const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
      const res = spawnSync(
        join(deployDir, 'docker', 'prune.sh'),
        ['--arch', arch, agent, join(root, agent)],
        {
          encoding: 'utf8',
        },
      );
      if (res.status !== 0) {
        throw new Error(
          `prune.sh ${agent} failed (${String(res.status)}):\n${res.stdout}\n${res.stderr}`,
        );
      }
    }
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    root,
    node,
    dir: (agent) => join(root, agent),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** True when this machine can run the read-only, non-root launch (mount namespace + setpriv). */
export function canSandbox(): boolean {
  const res = spawnSync('unshare', ['-m', 'true']);
  const sp = spawnSync('setpriv', ['--help']);
  return res.status === 0 && sp.status === 0;
}

/**
 * The command line that runs `node <agentNodeOptions> <tree>/main.mjs args` (the image's
 * entry point) as uid/gid 65532 in a private
 * mount namespace where the tree is a read-only bind mount.
 */
export function sandboxedCommand(
  trees: PrunedTrees,
  agent: Agent,
  args: readonly string[],
): string[] {
  const dir = trees.dir(agent);
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const inner = [
    `mount --bind ${quote(dir)} ${quote(dir)}`,
    `mount -o remount,bind,ro ${quote(dir)}`,
    `cd /`,
    `exec setpriv --reuid=65532 --regid=65532 --clear-groups ${quote(trees.node)} ${agentNodeOptions.map(quote).join(' ')} ${quote(join(dir, 'main.mjs'))} ${args.map(quote).join(' ')}`,
  ].join(' && ');
  return ['unshare', '-m', 'sh', '-c', inner];
}

export function runSandboxed(
  trees: PrunedTrees,
  agent: Agent,
  args: readonly string[],
  env: Record<string, string>,
): { status: number; stdout: string; stderr: string } {
  const [cmd, ...rest] = sandboxedCommand(trees, agent, args);
  const res = spawnSync(cmd as string, rest, {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    timeout: 60_000,
  });
  if (res.error !== undefined) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

export function spawnSandboxed(
  trees: PrunedTrees,
  agent: Agent,
  args: readonly string[],
  env: Record<string, string>,
): ChildProcess {
  const [cmd, ...rest] = sandboxedCommand(trees, agent, args);
  return spawn(cmd as string, rest, {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
