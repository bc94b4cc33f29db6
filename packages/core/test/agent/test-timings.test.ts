import { describe, expect, it } from 'vitest';
import { ConfigError, parseAgentConfig, type ConfigSpec } from '../../src/agent/config.js';
import { parseTestTimings } from '../../src/agent/environment.js';

const DEFAULTS = { pollSeconds: 30, jitter: 0.1 };

describe('MCS_TEST_TIMINGS', () => {
  it('overrides only the keys it names; unset or empty overrides nothing', () => {
    expect(parseTestTimings(DEFAULTS, '{"pollSeconds":1}')).toEqual({ pollSeconds: 1 });
    expect(parseTestTimings(DEFAULTS, undefined)).toEqual({});
    expect(parseTestTimings(DEFAULTS, ' ')).toEqual({});
    expect(parseTestTimings(DEFAULTS, '{"jitter":0}', ['jitter'])).toEqual({ jitter: 0 });
  });

  it.each([
    ['{"pollSecond":1}', /unknown key "pollSecond" \(known: pollSeconds, jitter\)/],
    ['{"pollSeconds":"1"}', /"pollSeconds" must be a number > 0, got "1"/],
    ['{"pollSeconds":0}', /"pollSeconds" must be a number > 0, got 0/],
    ['{"jitter":-1}', /"jitter" must be a number/],
    ['[1]', /must be a JSON object of numbers/],
    ['{pollSeconds:1}', /MCS_TEST_TIMINGS is not JSON/],
  ])('refuses %s, naming the problem', (raw, message) => {
    const run = () => parseTestTimings(DEFAULTS, raw);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });

  it('hands the agent its timings with the overrides, and records the overrides', async () => {
    const spec: ConfigSpec<Record<string, never>, { pollMs: number }, typeof DEFAULTS> = {
      name: 'probe-agent',
      version: '1.2.3-test',
      usage: 'probe',
      defaults: { leaseName: 'l', healthPort: 8080 },
      options: {},
      timings: DEFAULTS,
      build: (_args, _common, t) => ({ pollMs: t.pollSeconds * 1000 }),
    };
    const plain = await parseAgentConfig(spec, [], {}, 'h');
    expect(plain.pollMs).toBe(30_000);
    expect(plain.testTimings).toBeUndefined();
    const fast = await parseAgentConfig(spec, [], { MCS_TEST_TIMINGS: '{"pollSeconds":1}' }, 'h');
    expect(fast).toMatchObject({ pollMs: 1000, testTimings: { pollSeconds: 1 } });
    // Consumed, so not listed among the MCS_* variables that are not this agent's.
    expect(fast.ignoredEnvironment).toEqual([]);
  });
});
