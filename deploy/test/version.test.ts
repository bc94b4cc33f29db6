// One version: root package.json "version" is the release version. The chart's version and
// appVersion (the default image tag), the images' org.opencontainers.image.version label
// (Dockerfile default and what deploy/docker/build-images.sh passes) and every workspace
// package carry the same; tools/set-version.sh changes them all at once. The agents' --version
// and cloudmap_mcs_build_info report their package.json version, which this keeps equal.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { chartDir, repoRoot } from './support/helm.js';

const read = (...p: string[]): string => readFileSync(join(repoRoot, ...p), 'utf8');
const pkgVersion = (...p: string[]): unknown =>
  (JSON.parse(read(...p)) as { version?: unknown }).version;
const version = pkgVersion('package.json') as string;

describe('release version', () => {
  it('is set once, in the root package.json, as semver', () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });

  it('is the chart version and appVersion', () => {
    const chart = load(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(chart['version']).toBe(version);
    expect(chart['appVersion']).toBe(version);
  });

  it.each(['export', 'import'])('is the %s image label, by default and as built', (agent) => {
    const dockerfile = read(`Dockerfile.${agent}`);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toContain(`\nARG VERSION=${version}\n`);
    expect(runtime).toContain('org.opencontainers.image.version="${VERSION}"');
    const build = read('deploy', 'docker', 'build-images.sh');
    expect(build).toContain('--build-arg "VERSION=$version"');
    expect(build).toContain('"$root/package.json")');
  });

  it('is every workspace package’s version', () => {
    for (const p of ['cli', 'cloudmap-emulator', 'core', 'export-agent', 'import-agent'])
      expect(pkgVersion('packages', p, 'package.json'), p).toBe(version);
    expect(pkgVersion('deploy', 'package.json')).toBe(version);
    expect(pkgVersion('e2e', 'package.json')).toBe(version);
  });

  it('has a CHANGELOG with an Unreleased section, and the licence package.json names', () => {
    expect(read('CHANGELOG.md')).toMatch(/^## \[Unreleased\]$/m);
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('Apache-2.0');
    expect(read('LICENSE')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
  });

  it('moves everywhere at once with tools/set-version.sh', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-version-'));
    try {
      const files = [
        'package.json',
        'tools/set-version.sh',
        'Dockerfile.export',
        'Dockerfile.import',
        'deploy/package.json',
        'e2e/package.json',
        'deploy/charts/cloudmap-mcs/Chart.yaml',
        ...['cli', 'cloudmap-emulator', 'core', 'export-agent', 'import-agent'].map(
          (p) => `packages/${p}/package.json`,
        ),
      ];
      for (const f of files) cpSync(join(repoRoot, f), join(dir, f), { recursive: true });
      execFileSync(join(dir, 'tools', 'set-version.sh'), ['1.2.3-rc.1'], { stdio: 'ignore' });
      const changed = (f: string): string => readFileSync(join(dir, f), 'utf8');
      for (const f of files.filter((f) => f.endsWith('package.json')))
        expect((JSON.parse(changed(f)) as { version: string }).version, f).toBe('1.2.3-rc.1');
      const chart = load(changed('deploy/charts/cloudmap-mcs/Chart.yaml')) as Record<
        string,
        unknown
      >;
      expect([chart['version'], chart['appVersion']]).toEqual(['1.2.3-rc.1', '1.2.3-rc.1']);
      expect(changed('Dockerfile.import')).toContain('\nARG VERSION=1.2.3-rc.1\n');
      // Only the version moved: the rest of each file is as it was.
      expect(changed('Dockerfile.export').replace('1.2.3-rc.1', version)).toBe(
        read('Dockerfile.export'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
