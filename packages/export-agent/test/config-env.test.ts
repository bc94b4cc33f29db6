import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '@cloudmap-mcs/core/agent';
import { exportConfigSpec } from '../src/config.js';

/** Flags and MCS_* env → the agent's config, as runAgent parses them. */
const parseConfig = (
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  hostname: string = exportConfigSpec.name,
) => parseAgentConfig(exportConfigSpec, argv, env, hostname);

describe('parseConfig environment', () => {
  it('ignores MCS_* variables that are not its flags (the harness and other agents use the prefix)', async () => {
    const c = await parseConfig([], {
      MCS_E2E_STATE: '/tmp/x',
      MCS_POLL_FAST_SECONDS: '1',
      MCS_WORKERS: '3',
    });
    expect(c.workers).toBe(3);
  });
  it('still refuses an unknown command-line flag', async () => {
    await expect(parseConfig(['--poll-fast-seconds', '1'], {})).rejects.toThrow(/Unknown argument/);
  });
});
