import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseAgentConfig } from '@cloudmap-mcs/core/agent';
import { importConfigSpec } from '../src/config.js';

/** Flags and MCS_* env → the agent's config, as runAgent parses them. */
const parseConfig = (
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  hostname: string = importConfigSpec.name,
) => parseAgentConfig(importConfigSpec, argv, env, hostname);

describe('import agent config', () => {
  it('has safe defaults', async () => {
    const c = await parseConfig([], {}, 'host');
    expect(c).toMatchObject({
      pollFastMs: 5_000,
      pollSlowMs: 60_000,
      pollFeedMs: 1_200,
      pollHeartbeatMs: 30_000,
      pollResyncMs: 3_600_000,
      pollBackgroundBudget: 4,
      heartbeatTtlMs: 120_000,
      leaderElect: true,
      allowedCidrs: [],
      localServiceCidrs: [],
      localAddressesPeriodMs: 60_000,
      workers: 4,
    });
    expect(c.identity).toMatch(/^host-\d+$/);
    expect(c.namespaces).toEqual({
      allowed: [],
      denied: ['kube-system', 'kube-public', 'kube-node-lease', 'default'],
    });
    expect(c.caps).toEqual({ perNamespace: 2000, total: 5000 });
  });

  it('polls the feed every 1.2 s by default and takes no nudges (ADR 0020)', async () => {
    expect((await parseConfig([], {}, 'host')).pollFeedMs).toBe(1_200);
    for (const gone of [
      ['--nudge'],
      ['--nudge-host', '10.0.0.1'],
      ['--poll-feed-nudged-seconds', '5'],
    ])
      await expect(parseConfig(gone, {})).rejects.toThrow(/Unknown argument/);
  });

  it('reads the namespace policy and caps from flags and MCS_* variables', async () => {
    const c = await parseConfig(
      ['--max-imports', '50'],
      {
        MCS_ALLOWED_NAMESPACES: 'shop, default',
        MCS_DENIED_NAMESPACES: 'kube-system',
        MCS_MAX_IMPORTS_PER_NAMESPACE: '7',
      },
      'h',
    );
    expect(c.namespaces).toEqual({ allowed: ['shop', 'default'], denied: ['kube-system'] });
    expect(c.caps).toEqual({ perNamespace: 7, total: 50 });
    expect((await parseConfig(['--denied-namespaces', ''], {}, 'h')).namespaces.denied).toEqual([]);
  });

  it('reads MCS_* variables of known flags only; flags win over them', async () => {
    const env = {
      MCS_POLL_FAST_SECONDS: '2',
      MCS_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8',
      MCS_E2E_STATE: '/tmp/x',
      KUBECONFIG: '/k',
    };
    const c = await parseConfig(['--poll-fast-seconds', '3'], env, 'h');
    expect(c.pollFastMs).toBe(3_000);
    expect(c.allowedCidrs).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(c.ignoredEnvironment).toEqual(['MCS_E2E_STATE']);
    // $KUBECONFIG is client-node's default chain, not a config value.
    expect(c).not.toHaveProperty('kubeconfig');
  });

  it.each([
    [['--allowed-cidrs', '10.0.0.0/33'], /allowed-cidrs/],
    [['--poll-fast-seconds', '0'], /poll-fast-seconds/],
    // Constants since issue 31 (MCS_TEST_TIMINGS in tests).
    [['--poll-jitter', '0.2'], /Unknown argument/],
    [['--poll-heartbeat-seconds', '1'], /Unknown argument/],
    [['--max-endpoints-per-slice', '50'], /Unknown argument/],
    [['--external-services=false'], /Unknown argument/],
    [['--assume-role-external-id', 'x'], /needs --assume-role-arn/],
    [['--allowed-namespaces', 'Shop'], /allowed-namespaces: "Shop" is not a namespace name/],
    [['--denied-namespaces', 'a/b'], /denied-namespaces/],
    [['--max-imports-per-namespace', '0'], /max-imports-per-namespace/],
    [['--max-imports', '-1'], /max-imports/],
  ])('refuses %j', async (argv, message) => {
    await expect(parseConfig(argv, {}, 'h')).rejects.toThrow(ConfigError);
    await expect(parseConfig(argv, {}, 'h')).rejects.toThrow(message);
  });

  it('takes test timings from MCS_TEST_TIMINGS only, in seconds, and refuses bad ones', async () => {
    const c = await parseConfig(
      [],
      { MCS_TEST_TIMINGS: '{"pollHeartbeatSeconds":1,"pollSlowSeconds":2,"pollJitter":0}' },
      'h',
    );
    expect(c).toMatchObject({ pollHeartbeatMs: 1_000, pollSlowMs: 2_000, pollJitter: 0 });
    expect(c.testTimings).toEqual({ pollHeartbeatSeconds: 1, pollSlowSeconds: 2, pollJitter: 0 });
    await expect(parseConfig([], { MCS_TEST_TIMINGS: '{"pollJitter":2}' })).rejects.toThrow(
      /"pollJitter" must be within 0..1/,
    );
    // A key of the export agent is a typo here.
    await expect(parseConfig([], { MCS_TEST_TIMINGS: '{"heartbeatSeconds":1}' })).rejects.toThrow(
      /unknown key "heartbeatSeconds"/,
    );
  });

  it('reads the local Service CIDRs and refuses a bad one', async () => {
    const c = await parseConfig(['--local-service-cidrs', '10.96.0.0/12,fd00:96::/112'], {}, 'h');
    expect(c.localServiceCidrs).toEqual(['10.96.0.0/12', 'fd00:96::/112']);
    await expect(parseConfig(['--local-service-cidrs', '10.96.0.0'], {}, 'h')).rejects.toThrow(
      /--local-service-cidrs: invalid CIDR/,
    );
  });
});

describe('version', () => {
  it('is the release version of the root package.json (--version, build_info)', () => {
    const root = JSON.parse(
      readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(importConfigSpec.version).toBe(root.version);
  });
});
