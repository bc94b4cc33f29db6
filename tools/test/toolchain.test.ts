// tools/toolchain.sh started twice at once on a fresh cache (two make targets on a new
// machine): both succeed, one installs and the other waits for it (issue 36: without the lock
// the second failed with `mv: cannot stat …tmp`). The install is real npm work on a small
// local package standing in for pnpm (CLOUDMAP_MCS_PNPM_PACKAGE), so no network is needed.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fakeVersion = '0.0.0-race';
const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-toolchain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** npm must be on PATH for the install; the test's own Node.js (>= 22) is used as is. */
function npmDir(): string {
  const npm = execFileSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
  return dirname(npm);
}

/** A clone with only the script and a package.json pinning a pnpm no machine has. */
function fakeClone(): string {
  const root = join(dir, 'clone');
  mkdirSync(join(root, 'tools'), { recursive: true });
  copyFileSync(join(repoRoot, 'tools', 'toolchain.sh'), join(root, 'tools', 'toolchain.sh'));
  chmodSync(join(root, 'tools', 'toolchain.sh'), 0o755);
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ packageManager: `pnpm@${fakeVersion}` }),
  );
  return root;
}

/** A packed npm package named pnpm whose bin prints the fake version. */
function fakePnpmTarball(): string {
  const pkg = join(dir, 'fake-pnpm');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'pnpm', version: fakeVersion, bin: { pnpm: 'pnpm.cjs' } }),
  );
  writeFileSync(join(pkg, 'pnpm.cjs'), `#!/usr/bin/env node\nconsole.log('${fakeVersion}');\n`);
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: pkg,
    encoding: 'utf8',
    env: { ...process.env, npm_config_cache: join(dir, 'npm-cache') },
  });
  return join(dir, out.trim().split('\n').pop() ?? '');
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runToolchain(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(script, ['--print-path'], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('tools/toolchain.sh', () => {
  it('installs once when two runs start at once on a fresh cache; both succeed', async () => {
    const root = fakeClone();
    const tarball = fakePnpmTarball();
    const cache = join(dir, 'cache');
    const env = {
      HOME: dir,
      PATH: [dirname(process.execPath), npmDir(), '/usr/bin', '/bin'].join(':'),
      CLOUDMAP_MCS_CACHE: cache,
      CLOUDMAP_MCS_PNPM_PACKAGE: tarball,
      npm_config_cache: join(dir, 'npm-cache'),
    };
    const script = join(root, 'tools', 'toolchain.sh');
    const runs = await Promise.all([runToolchain(script, env), runToolchain(script, env)]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);

    const installs = runs.filter((r) => r.stderr.includes(`installing pnpm ${fakeVersion}`));
    expect(installs, runs.map((r) => r.stderr).join('\n---\n')).toHaveLength(1);

    // Both print a PATH whose pnpm is the one installed, and the cache holds it once, complete,
    // with no temporary directory left behind.
    const pnpmDir = join(cache, `pnpm-${fakeVersion}`);
    for (const r of runs) {
      expect(r.stdout.split(':')[0]).toBe(join(pnpmDir, 'node_modules', '.bin'));
      const version = execFileSync('pnpm', ['--version'], {
        encoding: 'utf8',
        env: { ...env, PATH: r.stdout.trim() },
      });
      expect(version.trim()).toBe(fakeVersion);
    }
    expect(readdirSync(pnpmDir)).toEqual(['node_modules']);
    expect(readdirSync(cache).filter((f) => f.includes('.tmp'))).toEqual([]);

    // A third run finds the cache warm and installs nothing.
    const warm = await runToolchain(script, env);
    expect(warm.code, warm.stderr).toBe(0);
    expect(warm.stderr).not.toContain('installing');
  });
});
