import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentOptions } from '@cloudmap-mcs/core/agent';
import { exportConfigSpec } from '../src/config.js';

// Issue 31, "Fewer knobs": what --help lists stays short, and every flag says why to change it.
describe('export agent flags', () => {
  const options = agentOptions(exportConfigSpec);
  const docs = ['install.md', 'export-agent.md']
    .map((f) => readFileSync(new URL(`../../../docs/${f}`, import.meta.url), 'utf8'))
    .join('\n');

  it('are at most 25', () => {
    expect(Object.keys(options).length).toBeLessThanOrEqual(25);
  });

  it.each(Object.entries(options))('--%s has a describe, and a row in the docs', (flag, option) => {
    expect(typeof option.describe).toBe('string');
    expect(String(option.describe).trim()).not.toBe('');
    expect(docs).toContain(`\`--${flag}\``);
  });
});
