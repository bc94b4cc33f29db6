/**
 * The release version: this package's package.json "version", which tools/set-version.sh
 * keeps equal to the root package.json's, the one source (docs/contributing.md#versions-and-releases;
 * deploy/test/version.test.ts fails while they differ). Found by walking up from this module,
 * so it works from src/ (tests) and dist/src/ (the built binary) alike.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function cliVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === '@cloudmap-mcs/cli' && typeof pkg.version === 'string') return pkg.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
