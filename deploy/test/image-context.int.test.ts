// (Integration project: it installs and compiles the workspace twice, ~1 min each.)
// The image build without an engine: the files `docker build .` would send (git's files minus
// .dockerignore) in a fresh directory, then the Dockerfile's RUN line itself (prune.sh
// --install --arch), so a .dockerignore that drops something the build needs fails here.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './support/helm.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Docker's .dockerignore semantics for the patterns we use (paths, double-star prefixes, globs). */
function dockerIgnored(patterns: readonly string[], file: string): boolean {
  const toRegex = (glob: string): RegExp =>
    new RegExp(
      `^${glob
        .split('**/')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('(?:.*/)?')}(?:/.*)?$`,
    );
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const p = (negate ? raw.slice(1) : raw).replace(/^\//, '').replace(/\/$/, '');
    if (toRegex(p).test(file)) ignored = !negate;
  }
  return ignored;
}

const patterns = (): string[] =>
  readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

describe('docker build context', () => {
  it('matches .dockerignore the way Docker does', () => {
    const p = ['.git', '**/node_modules', '**/dist', 'docs', 'Dockerfile.*'];
    expect(dockerIgnored(p, 'packages/core/dist/src/index.js')).toBe(true);
    expect(dockerIgnored(p, 'node_modules/x/index.js')).toBe(true);
    expect(dockerIgnored(p, 'docs/install.md')).toBe(true);
    expect(dockerIgnored(p, 'Dockerfile.export')).toBe(true);
    expect(dockerIgnored(p, 'packages/core/src/index.ts')).toBe(false);
    expect(dockerIgnored(p, 'docsx/a')).toBe(false);
  });

  it.each(['export-agent', 'import-agent'])(
    '%s: the Dockerfile RUN line builds a runnable tree from the build context alone',
    (agent) => {
      const files = execFileSync('git', ['-C', repoRoot, 'ls-files', '-z'], { encoding: 'utf8' })
        .split('\0')
        .filter((f) => f !== '');
      const ignore = patterns();
      const ctx = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-docker-ctx-'));
      dirs.push(ctx);
      let sent = 0;
      for (const f of files) {
        if (dockerIgnored(ignore, f) || !existsSync(join(repoRoot, f))) continue;
        mkdirSync(dirname(join(ctx, f)), { recursive: true });
        copyFileSync(join(repoRoot, f), join(ctx, f));
        sent++;
      }
      expect(sent).toBeGreaterThan(50);
      for (const gone of ['docs', 'samples', 'deploy/charts', 'e2e/controlplane']) {
        expect(existsSync(join(ctx, gone)), gone).toBe(false);
      }
      const out = join(ctx, '.out');
      const res = spawnSync(
        join(ctx, 'deploy', 'docker', 'prune.sh'),
        ['--install', '--arch', process.arch === 'arm64' ? 'arm64' : 'amd64', agent, out],
        { cwd: ctx, encoding: 'utf8', env: { ...process.env, CI: 'true' } },
      );
      expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
      const help = spawnSync(
        process.execPath,
        ['--enable-source-maps', join(out, 'main.mjs'), '--help'],
        {
          cwd: tmpdir(),
          encoding: 'utf8',
          env: { PATH: process.env['PATH'] ?? '' },
        },
      );
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toContain('--cluster-id');
    },
    600_000,
  );
});
