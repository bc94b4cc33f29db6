// The migration test runs the doc's own commands (issue 35): the extraction of the
// `migration-test` blocks from docs/migrate-from-aws-controller.md, and the doc itself.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docSteps, loadDocSteps, migrationDoc } from '../src/migration/doc-steps.js';

describe('docSteps', () => {
  it('takes each marked sh block, de-indented, in order; ignores unmarked ones', () => {
    const md = [
      '1. Stop:',
      '',
      '   <!-- migration-test: migrate -->',
      '   ```sh',
      '   kubectl scale x',
      '     --replicas=0',
      '   ```',
      '',
      '```sh',
      'echo unmarked',
      '```',
      '<!-- migration-test: rollback -->',
      '```sh',
      'helm uninstall mcs',
      '```',
    ].join('\n');
    expect(docSteps(md)).toEqual([
      { phase: 'migrate', line: 4, script: 'kubectl scale x\n  --replicas=0' },
      { phase: 'rollback', line: 13, script: 'helm uninstall mcs' },
    ]);
  });

  it('refuses a marker without an sh block after it', () => {
    expect(() => docSteps('<!-- migration-test: migrate -->\n```yaml\na: 1\n```')).toThrow(
      /not followed by a ```sh block/,
    );
  });
});

describe('docs/migrate-from-aws-controller.md', () => {
  it('has the blocks make test-migration runs, and its figures', () => {
    const steps = loadDocSteps(['migrate', 'rollback', 'remove']);
    expect(steps.get('migrate')).toHaveLength(5);
    const all = [...steps.values()]
      .flat()
      .map((s) => s.script)
      .join('\n');
    expect(all).toContain('scale deploy cloud-map-mcs-controller-manager --replicas=0');
    expect(all).toContain('multicluster.kubernetes.io/derived-service=');
    expect(readFileSync(migrationDoc(), 'utf8')).toMatch(/\*\*0 failed\*\*/);
  });
});
