import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  buildCli,
  configOrExit,
  envName,
  parseCli,
} from '../../src/runtime/config/cli.js';
import {
  commonConfigFrom,
  commonOptions,
  parseBindAddress,
  parseRateLimits,
} from '../../src/runtime/config/common.js';
import { logEffectiveConfig, redactConfig } from '../../src/runtime/config/redact.js';
import { createMemoryLogger } from '../../src/testing/memory-logger.js';

const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseCli({ name: 'export-agent', description: 'test', options: commonOptions, argv, env });
const config = (argv: string[], env: Record<string, string> = {}) =>
  commonConfigFrom(parse(argv, env).args, {
    leaseName: 'cloudmap-mcs-export-agent',
    podNamespace: 'mcs-system',
  });

describe('CLI with MCS_* environment', () => {
  it('maps option names to variables', () => {
    expect(envName('log-level')).toBe('MCS_LOG_LEVEL');
    expect(envName('metrics-bind-address')).toBe('MCS_METRICS_BIND_ADDRESS');
  });

  it('takes values from MCS_* variables; flags win', () => {
    const c = config(['--log-level', 'debug', '--region', 'eu-west-1'], {
      MCS_LOG_LEVEL: 'warn',
      MCS_LEASE_DURATION: '30',
      MCS_LEADER_ELECT: 'false',
      MCS_CLUSTER_ID: 'c1',
    });
    expect(c.logLevel).toBe('debug');
    expect(c.aws.region).toBe('eu-west-1');
    expect(c.leaderElection).toEqual({ enabled: false });
    expect(c.flags).toEqual({ clusterId: 'c1' });
  });

  it('has safe defaults', () => {
    const c = config([]);
    expect(c).toMatchObject({
      logLevel: 'info',
      logFormat: 'json',
      metrics: { host: '0.0.0.0', port: 8080 },
      flags: {},
      leaderElection: {
        enabled: true,
        namespace: 'mcs-system',
        name: 'cloudmap-mcs-export-agent',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      aws: { rateLimits: {} },
      shutdownTimeoutMs: 30_000,
    });
    expect(c.aws.endpoint).toBeUndefined();
  });

  it('reports MCS_* variables that match no option', () => {
    expect(parse([], { MCS_LOG_LEVL: 'x', MCS_REGION: 'r', OTHER: '1' }).unknownEnv).toEqual([
      'MCS_LOG_LEVL',
    ]);
  });

  it.each([
    [['--log-level', 'loud'], {}, /log-level/],
    [['--no-such-flag'], {}, /Unknown argument/],
    [[], { MCS_LOG_FORMAT: 'xml' }, /log-format/],
    [['--lease-duration', '5'], {}, /--lease-duration must exceed --renew-deadline/],
    [['--metrics-bind-address', 'nope'], {}, /not host:port/],
    [['--cloudmap-endpoint', 'not a url'], {}, /not a URL/],
    [['--assume-role-arn', 'role'], {}, /not an IAM role ARN/],
    [['--assume-role-external-id', 'x'], {}, /needs --assume-role-arn/],
    [['--cloudmap-rate-limits', 'listThings=1:2'], {}, /unknown operation "listThings"/],
    [['--shutdown-timeout', '-1'], {}, /--shutdown-timeout must be a positive number/],
  ] as const)('%j %j is a ConfigError', (argv, env, message) => {
    let error: unknown;
    try {
      config([...argv], env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('needs a Lease namespace outside a Pod', () => {
    expect(() => commonConfigFrom(parse([]).args, { leaseName: 'x' })).toThrow(
      /--leader-election-namespace is required/,
    );
  });

  it('takes the endpoint from AWS_ENDPOINT_URL_SERVICEDISCOVERY passed by main, flag first', () => {
    const args = parse([]).args;
    expect(
      commonConfigFrom(args, {
        leaseName: 'x',
        podNamespace: 'n',
        cloudMapEndpoint: 'http://127.0.0.1:4566',
      }).aws.endpoint,
    ).toBe('http://127.0.0.1:4566');
    const flagged = parse(['--cloudmap-endpoint', 'http://emu:1']).args;
    expect(
      commonConfigFrom(flagged, {
        leaseName: 'x',
        podNamespace: 'n',
        cloudMapEndpoint: 'http://other',
      }).aws.endpoint,
    ).toBe('http://emu:1');
  });

  it('parses rate limits and bind addresses', () => {
    expect(parseRateLimits('listInstances=5:10, discoverInstances=50.5:100')).toEqual({
      listInstances: { perSecond: 5, burst: 10 },
      discoverInstances: { perSecond: 50.5, burst: 100 },
    });
    expect(parseBindAddress(':9090')).toEqual({ host: '0.0.0.0', port: 9090 });
    expect(parseBindAddress('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
  });

  it('--help lists the env variable of each flag', () => {
    const help = buildCli({
      name: 'export-agent',
      description: 'd',
      options: commonOptions,
      argv: [],
      env: {},
    });
    let text = '';
    help.showHelp((s) => (text = s));
    expect(text).toContain('[env MCS_LOG_LEVEL]');
    expect(text).toContain('--cloudmap-rate-limits');
  });
});

describe('configOrExit', () => {
  it('prints the problem and exits 2 on a ConfigError', () => {
    const lines: string[] = [];
    const codes: number[] = [];
    const exit = ((c: number) => {
      codes.push(c);
      throw new Error('exited');
    }) as (c: number) => never;
    expect(() =>
      configOrExit('export-agent', () => config(['--log-level', 'loud']), {
        stderr: (l) => lines.push(l),
        exit,
      }),
    ).toThrow('exited');
    expect(codes).toEqual([2]);
    expect(lines[0]).toMatch(/^export-agent: invalid configuration: .*log-level/s);
    expect(lines[1]).toBe(
      'Run export-agent --help for the flags and their MCS_* environment variables.',
    );
  });

  it('returns the config when valid and rethrows other errors', () => {
    expect(configOrExit('a', () => 42)).toBe(42);
    expect(() =>
      configOrExit('a', () => {
        throw new TypeError('bug');
      }),
    ).toThrow(TypeError);
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
});
