import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  envToArgs,
  parseAgentConfig,
  type ConfigSpec,
} from '../../src/agent/config.js';
import { logEffectiveConfig, redactConfig } from '../../src/agent/redact.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';

const OWN = { 'poll-seconds': { type: 'number', default: 5 } } as const;
const spec: ConfigSpec<typeof OWN, { pollMs: number }> = {
  name: 'probe-agent',
  version: '1.2.3-test',
  usage: 'probe',
  defaults: { leaseName: 'probe-lease', healthPort: 8081, metricsPort: 8080 },
  options: OWN,
  build: (args) => ({ pollMs: args.pollSeconds * 1000 }),
};
const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseAgentConfig(spec, argv, env, 'host-1');

describe('agent config', () => {
  it('has the common defaults plus the agent’s own', async () => {
    expect(await parse([])).toEqual({
      workers: 4,
      leaderElect: true,
      leaseNamespace: 'cloudmap-mcs-system',
      leaseName: 'probe-lease',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
      identity: `host-1-${String(process.pid)}`,
      healthPort: 8081,
      metricsPort: 8080,
      bindAddress: undefined,
      logLevel: 'info',
      logFormat: 'json',
      ignoredEnvironment: [],
      pollMs: 5000,
    });
  });

  it('reads MCS_* for common and own flags; the command line wins; others are listed', async () => {
    const cfg = await parse(['--workers', '7'], {
      MCS_WORKERS: '2',
      MCS_POLL_SECONDS: '3',
      MCS_LEASE_DURATION_SECONDS: '30',
      MCS_BIND_ADDRESS: '127.0.0.1',
      POD_NAME: 'pod-1',
      POD_NAMESPACE: 'mcs',
      MCS_E2E_STATE: '/x',
      AWS_ENDPOINT_URL_SERVICEDISCOVERY: 'http://127.0.0.1:1',
      AWS_REGION: 'eu-west-1',
    });
    expect(cfg).toMatchObject({
      workers: 7,
      pollMs: 3000,
      leaseDurationSeconds: 30,
      bindAddress: '127.0.0.1',
      identity: 'pod-1',
      leaseNamespace: 'mcs',
      cloudMapEndpoint: 'http://127.0.0.1:1',
      region: 'eu-west-1',
      ignoredEnvironment: ['MCS_E2E_STATE'],
    });
  });

  it('serves metrics on the health port unless told otherwise', async () => {
    const one = { ...spec, defaults: { leaseName: 'l', healthPort: 8080 } };
    expect(await parseAgentConfig(one, [], {}, 'h')).toMatchObject({
      healthPort: 8080,
      metricsPort: 8080,
    });
    expect(await parseAgentConfig(one, ['--metrics-port', '9090'], {}, 'h')).toMatchObject({
      metricsPort: 9090,
    });
  });

  it.each([
    [['--workers', '0'], /--workers must be a positive number/],
    // Gone with quiet leadership (ADR 0020).
    [['--advertise-host', '10.0.0.1'], /Unknown argument/],
    [['--quiet-lease'], /Unknown argument/],
    [['--health-port', '70000'], /--health-port must be a port/],
    [['--lease-duration-seconds', '5'], /lease-duration > renew-deadline > retry-period/],
    [['--assume-role-external-id', 'x'], /needs --assume-role-arn/],
    [['--no-such-flag'], /Unknown argument/],
    // Standard variables instead (issue 31): KUBECONFIG, AWS_*, POD_*; the log format follows stdout.
    [['--kubeconfig', '/k'], /Unknown argument/],
    [['--region', 'eu-west-1'], /Unknown argument/],
    [['--cloudmap-endpoint', 'http://e'], /Unknown argument/],
    [['--lease-namespace', 'x'], /Unknown argument/],
    [['--identity', 'x'], /Unknown argument/],
    [['--pod-name', 'x'], /Unknown argument/],
    [['--log-format', 'text'], /Unknown argument/],
    [['--log-level', 'loud'], /--log-level must be one of/],
  ])('refuses %j', async (argv, message) => {
    const error = await parse(argv).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('reads a VPC endpoint pair (control and data) and refuses an endpoint that is no URL', async () => {
    const control = 'https://vpce-1-a.servicediscovery.us-west-2.vpce.amazonaws.com';
    const data = 'https://vpce-2-b.data-servicediscovery.us-west-2.vpce.amazonaws.com';
    expect(
      await parse([], {
        AWS_ENDPOINT_URL_SERVICEDISCOVERY: control,
        AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA: data,
      }),
    ).toMatchObject({ cloudMapEndpoint: control, cloudMapDataEndpoint: data });
    for (const [name, value] of [
      ['AWS_ENDPOINT_URL_SERVICEDISCOVERY', 'servicediscovery-fips.us-west-2.amazonaws.com'],
      ['AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA', 'ftp://x'],
    ] as const) {
      const error = await parse([], { [name]: value }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(new RegExp(`^${name} must be an https:// URL`));
    }
  });

  it('logs text to a terminal, JSON otherwise', async () => {
    expect((await parseAgentConfig(spec, [], {}, 'h', true)).logFormat).toBe('text');
    expect((await parseAgentConfig(spec, [], {}, 'h', false)).logFormat).toBe('json');
  });

  it('refuses the variables of retired flags, naming their replacement', async () => {
    const error = await parse([], { MCS_CLOUDMAP_ENDPOINT: 'http://e', MCS_REGION: 'x' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/MCS_REGION \(set AWS_REGION\)/);
    expect((error as Error).message).toMatch(
      /MCS_CLOUDMAP_ENDPOINT \(set AWS_ENDPOINT_URL_SERVICEDISCOVERY\)/,
    );
  });

  it('maps env names onto flags only', () => {
    expect(envToArgs({ MCS_A_B: '1', MCS_C: '2', OTHER: '3' }, new Set(['a-b']))).toEqual({
      known: { 'a-b': '1' },
      ignored: ['MCS_C'],
    });
  });
});

describe('effective config log', () => {
  it('redacts secrets, nested too, and logs once', () => {
    const logger = createMemoryLogger();
    logEffectiveConfig(logger, {
      region: 'us-east-1',
      aws: {
        assumeRole: { roleArn: 'arn:aws:iam::111122223333:role/x', externalId: 'SECRET-1' },
        sessionToken: 'T',
      },
      list: [{ password: 'p' }],
      apiToken: '',
    });
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]?.fields['config']).toEqual({
      region: 'us-east-1',
      aws: {
        assumeRole: { roleArn: 'arn:aws:iam::111122223333:role/x', externalId: '[redacted]' },
        sessionToken: '[redacted]',
      },
      list: [{ password: '[redacted]' }],
      apiToken: '',
    });
    expect(JSON.stringify(logger.entries)).not.toContain('SECRET-1');
    expect(redactConfig('plain')).toBe('plain');
  });

  it('redacts the assume-role external id of an agent config', () => {
    expect(redactConfig({ assumeRoleExternalId: 'x-1', assumeRoleArn: 'arn' })).toEqual({
      assumeRoleExternalId: '[redacted]',
      assumeRoleArn: 'arn',
    });
  });
});

describe('--version', () => {
  it('prints the spec’s version (the release version) and nothing else', async () => {
    const out: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void out.push(args.join(' '));
    try {
      await parse(['--version']);
    } finally {
      console.log = log;
    }
    expect(out).toEqual(['1.2.3-test']);
  });
});
