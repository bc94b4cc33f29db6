import { describe, expect, it } from 'vitest';
import { agentOptions } from '@cloudmap-mcs/core/agent';
import { exportConfigSpec } from '../src/config.js';

// Issue 31, "Fewer knobs": what --help lists stays short, and every flag says why to change it.
describe('export agent flags', () => {
  const options = agentOptions(exportConfigSpec);

  it('are at most 25', () => {
    expect(Object.keys(options).length).toBeLessThanOrEqual(25);
  });

  it.each(Object.entries(options))('--%s has a describe', (_flag, option) => {
    expect(typeof option.describe).toBe('string');
    expect(String(option.describe).trim()).not.toBe('');
  });
});
