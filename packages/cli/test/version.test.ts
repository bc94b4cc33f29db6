import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliVersion } from '../src/version.js';

describe('cliVersion', () => {
  it('is the root package.json version (the one release version)', () => {
    const root = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8'),
    ) as { version: string };
    expect(cliVersion()).toBe(root.version);
  });

  it('says unknown outside the package', () => {
    expect(cliVersion('/')).toBe('unknown');
  });
});
