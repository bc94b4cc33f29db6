import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseAgentConfig } from '@cloudmap-mcs/core/agent';
import { exportConfigSpec } from '../src/config.js';
import { resyncPeriodMs } from '../src/reconciler-state.js';

/** Flags and MCS_* env → the agent's config, as runAgent parses them. */
const parseConfig = (
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  hostname: string = exportConfigSpec.name,
) => parseAgentConfig(exportConfigSpec, argv, env, hostname);

describe('parseConfig', () => {
  it('uses defaults', async () => {
    const c = await parseConfig([], {});
    expect(c).toMatchObject({
      workers: 4,
      resyncSeconds: 1800,
      backgroundBudget: 4,
      peerCheckSeconds: 3,
      peerCheckBudget: 100,
      heartbeatSeconds: 30,
      changeFeed: true,
      feedIntervalSeconds: 1,
      leaderElect: true,
      logLevel: 'info',
    });
    expect(c.clusterId).toBeUndefined();
    // DNS namespaces are opt-in: HTTP namespaces and services without DnsConfig by default.
    expect(c.dns).toBeUndefined();
  });

  it('reads the default pod label attribute keys from the flag or MCS_POD_LABEL_ATTRIBUTES', async () => {
    expect((await parseConfig([], {})).podLabelAttributes).toEqual([]);
    expect(
      (await parseConfig(['--pod-label-attributes', 'version, track'], {})).podLabelAttributes,
    ).toEqual(['track', 'version']);
    expect(
      (await parseConfig([], { MCS_POD_LABEL_ATTRIBUTES: 'app.kubernetes.io/version' }))
        .podLabelAttributes,
    ).toEqual(['app.kubernetes.io/version']);
    await expect(parseConfig(['--pod-label-attributes', 'ok,not ok'], {})).rejects.toThrow(
      new ConfigError('--pod-label-attributes: not label keys: not ok'),
    );
  });

  it('reads the DNS namespace options (ADR 0010) and refuses inconsistent ones', async () => {
    expect((await parseConfig(['--dns-records'], {})).dns).toEqual({ ttl: 10 });
    expect(
      (
        await parseConfig([], {
          MCS_DNS_RECORDS: 'true',
          MCS_DNS_TTL: '60',
          MCS_DNS_NAMESPACE_VPC: 'vpc-0abc',
        })
      ).dns,
    ).toEqual({ ttl: 60, namespaceVpc: 'vpc-0abc' });
    await expect(parseConfig(['--dns-namespace-vpc', 'vpc-1'], {})).rejects.toThrow(
      /needs --dns-records/,
    );
    await expect(parseConfig(['--dns-records', '--dns-ttl', '1.5'], {})).rejects.toThrow(
      ConfigError,
    );
  });

  it('reads MCS_* environment variables, flags win', async () => {
    const c = await parseConfig(['--workers', '8', '--cluster-id', 'flag'], {
      MCS_WORKERS: '2',
      MCS_CLUSTER_ID: 'env',
      MCS_CLUSTERSET_ID: 'set',
      MCS_LEADER_ELECT: 'false',
      HOME: '/ignored',
    });
    expect(c).toMatchObject({
      workers: 8,
      clusterId: 'flag',
      clustersetId: 'set',
      leaderElect: false,
    });
  });

  it.each([
    [['--workers', '0'], /--workers must be a positive number/],
    [['--peer-check-seconds', '-1'], /--peer-check-seconds must be 0 or a positive number/],
    [['--health-port', '70000'], /--health-port must be a port/],
    [['--renew-deadline-seconds', '20'], /lease-duration > renew-deadline/],
  ])('refuses %j', async (argv, message) => {
    await expect(parseConfig(argv, {})).rejects.toThrow(ConfigError);
    await expect(parseConfig(argv, {})).rejects.toThrow(message);
  });

  it('refuses unknown flags', async () => {
    await expect(parseConfig(['--no-such-flag'], {})).rejects.toThrow(/Unknown argument/);
    // Constants since issue 31 (MCS_TEST_TIMINGS in tests).
    await expect(parseConfig(['--heartbeat-seconds', '5'], {})).rejects.toThrow(/Unknown argument/);
    await expect(parseConfig(['--feed-interval-seconds', '2'], {})).rejects.toThrow(
      /Unknown argument/,
    );
  });

  it('takes test timings from MCS_TEST_TIMINGS only', async () => {
    const c = await parseConfig([], {
      MCS_TEST_TIMINGS: '{"heartbeatSeconds":2,"feedIntervalSeconds":0.5}',
    });
    expect(c).toMatchObject({ heartbeatSeconds: 2, feedIntervalSeconds: 0.5 });
    await expect(parseConfig([], { MCS_TEST_TIMINGS: '{"pollSlowSeconds":1}' })).rejects.toThrow(
      /MCS_TEST_TIMINGS: unknown key "pollSlowSeconds"/,
    );
  });
});

describe('resync period within the background budget', () => {
  it('stays at --resync-seconds for few exports and stretches past budget x period', () => {
    expect(resyncPeriodMs(1_800_000, 50, 3)).toBe(1_800_000); // 50 in 30 min: under 3/min
    expect(resyncPeriodMs(1_800_000, 90, 3)).toBe(1_800_000); // exactly 3 a minute
    expect(resyncPeriodMs(1_800_000, 1_000, 3)).toBe(20_000_000); // 5.6 h
    expect(resyncPeriodMs(1_800_000, 1_000, 0)).toBe(1_800_000); // no limit
  });
});

describe('version', () => {
  it('is the release version of the root package.json (--version, build_info)', () => {
    const root = JSON.parse(
      readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(exportConfigSpec.version).toBe(root.version);
  });
});
