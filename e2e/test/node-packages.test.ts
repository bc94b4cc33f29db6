// Every host command the real-node harness runs must come from a package a fresh Debian machine
// has (Essential/required) or one e2e/nodes/packages.sh installs; otherwise the first real-node
// run on a minimal image (debian:*-slim has no iproute2) dies with a bare spawn ENOENT.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodesDir, repoRoot } from '../src/paths.js';

/** Where each command comes from; `base`: present on every Debian system (Essential/required). */
const PROVIDER: Record<string, string> = {
  ip: 'iproute2',
  ctr: 'containerd',
  nsenter: 'base',
  umount: 'base',
  mkdir: 'base',
  sh: 'base',
  bash: 'base',
  tar: 'base',
  ldd: 'base',
};

/** Commands spawned by name (`run('ip', ...)`, `execFileSync('tar', ...)`) in e2e/src/nodes. */
function commandsRun(): Set<string> {
  const dir = join(repoRoot(), 'e2e', 'src', 'nodes');
  const found = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/\b(?:run|execFileSync|spawnSync)\(\s*'([\w.-]+)'/g))
      found.add(m[1]!);
  }
  return found;
}

/**
 * The package names packages.sh checks and installs: the `<package>=<file it installs>`
 * arguments of its `ensure_debian_packages` call (tools/debian-packages.sh).
 */
function installedByScript(): string[] {
  const script = readFileSync(join(nodesDir(), 'packages.sh'), 'utf8');
  const call = /^ensure_debian_packages [^\n]*\\\n((?:[ \t]+\S+=\S+[ \t]*\\?\n?)+)/m.exec(script);
  expect(
    call,
    'packages.sh has no `ensure_debian_packages` call with <package>=<file> lines',
  ).not.toBeNull();
  return [...call![1]!.matchAll(/^[ \t]+([\w.+-]+)=\//gm)].map((m) => m[1]!);
}

describe('real-node host commands', () => {
  it('each comes from a base package or one packages.sh installs', () => {
    const commands = commandsRun();
    expect(commands.has('ip')).toBe(true);
    const packages = installedByScript();
    for (const cmd of commands) {
      const provider = PROVIDER[cmd];
      expect(provider, `${cmd}: which Debian package provides it? (add it here)`).toBeDefined();
      if (provider !== 'base') expect(packages, `${cmd} needs ${provider}`).toContain(provider);
    }
  });
});
