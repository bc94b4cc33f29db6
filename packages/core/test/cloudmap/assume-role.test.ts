import { describe, expect, it } from 'vitest';
import {
  AssumeRoleError,
  createAssumeRoleCredentials,
  roleSessionName,
} from '../../src/cloudmap/assume-role.js';

const stsReturning = (expiresAtMs: number) => {
  const inputs: unknown[] = [];
  let n = 0;
  return {
    inputs,
    sts: {
      send: async (cmd: { input: unknown }) => {
        inputs.push(cmd.input);
        n += 1;
        return {
          Credentials: {
            AccessKeyId: `AKID${n}`,
            SecretAccessKey: 'SECRET-VALUE',
            SessionToken: 'TOKEN',
            Expiration: new Date(expiresAtMs),
          },
        };
      },
    } as never,
  };
};

describe('AssumeRole credentials', () => {
  it('assumes the role once, caches until the refresh margin, shares concurrent calls', async () => {
    let now = 0;
    const { sts, inputs } = stsReturning(3_600_000);
    const provider = createAssumeRoleCredentials({
      roleArn: 'arn:aws:iam::111122223333:role/mcs',
      externalId: 'ext',
      sts,
      now: () => now,
    });
    const [a, b] = await Promise.all([provider(), provider()]);
    expect(a.accessKeyId).toBe('AKID1');
    expect(b).toBe(a);
    expect(inputs).toEqual([
      {
        RoleArn: 'arn:aws:iam::111122223333:role/mcs',
        RoleSessionName: 'cloudmap-mcs',
        DurationSeconds: 3600,
        ExternalId: 'ext',
      },
    ]);
    now = 3_600_000 - 5 * 60_000 - 1;
    expect((await provider()).accessKeyId).toBe('AKID1');
    now += 2;
    expect((await provider()).accessKeyId).toBe('AKID2');
  });

  it('fails with a named error that names the role and carries no secret', async () => {
    const provider = createAssumeRoleCredentials({
      roleArn: 'arn:aws:iam::1:role/x',
      sts: {
        send: async () => {
          throw Object.assign(new Error('Access denied for AKIDSECRET'), { name: 'AccessDenied' });
        },
      } as never,
    });
    const e: unknown = await provider().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AssumeRoleError);
    expect((e as Error).message).toMatch(
      /^AssumeRole arn:aws:iam::1:role\/x failed: AccessDenied: the role's trust policy must name/,
    );
    expect((e as Error).message).not.toContain('AKIDSECRET');
  });

  it('after a refusal, fails fast for failureBackoffMs without calling STS again', async () => {
    let now = 0;
    let calls = 0;
    const provider = createAssumeRoleCredentials({
      roleArn: 'arn:aws:iam::1:role/x',
      sts: {
        send: async () => {
          calls += 1;
          throw Object.assign(new Error('no'), { name: 'AccessDenied' });
        },
      } as never,
      failureBackoffMs: 10_000,
      now: () => now,
    });
    const errors = await Promise.all(
      Array.from({ length: 20 }, () => provider().catch((x: unknown) => x)),
    );
    for (const e of errors) expect(e).toBeInstanceOf(AssumeRoleError);
    expect(calls).toBe(1);
    now = 9_999;
    await expect(provider()).rejects.toThrow(AssumeRoleError);
    expect(calls).toBe(1);
    now = 10_000;
    await expect(provider()).rejects.toThrow(AssumeRoleError);
    expect(calls).toBe(2);
  });

  it('reads the session name at each AssumeRole', async () => {
    const identity: { clusterId?: string } = {};
    const { sts, inputs } = stsReturning(0);
    const provider = createAssumeRoleCredentials({
      roleArn: 'arn:aws:iam::1:role/x',
      sessionName: () => roleSessionName('export-agent', identity.clusterId),
      sts,
      now: () => 1,
    });
    await provider();
    identity.clusterId = 'east-1';
    await provider();
    expect(inputs.map((i) => (i as { RoleSessionName: string }).RoleSessionName)).toEqual([
      'cloudmap-mcs-export',
      'cloudmap-mcs-export-east-1',
    ]);
  });
});

describe('roleSessionName', () => {
  const stsRule = /^[\w+=,.@-]{2,64}$/;

  it('names the agent and the cluster', () => {
    expect(roleSessionName('export-agent', 'east-1')).toBe('cloudmap-mcs-export-east-1');
    expect(roleSessionName('import-agent', 'west')).toBe('cloudmap-mcs-import-west');
    expect(roleSessionName('import-agent')).toBe('cloudmap-mcs-import');
  });

  it('keeps to STS: 64 characters of [\\w+=,.@-], distinct for long ids with one prefix', () => {
    const long = 'a'.repeat(60);
    const a = roleSessionName('export-agent', `${long}-one`);
    const b = roleSessionName('export-agent', `${long}-two`);
    for (const n of [a, b]) {
      expect(n).toMatch(stsRule);
      expect(n.startsWith('cloudmap-mcs-export-aaaa')).toBe(true);
    }
    expect(a).not.toBe(b);
    expect(roleSessionName('export-agent', 'c/l:u s#ter')).toBe('cloudmap-mcs-export-c-l-u-s-ter');
    expect(roleSessionName('export-agent', 'x'.repeat(44))).toHaveLength(64);
  });
});
