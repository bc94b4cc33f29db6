import { describe, expect, it } from 'vitest';
import { AssumeRoleError, createAssumeRoleCredentials } from '../../src/cloudmap/assume-role.js';

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
    expect((e as Error).message).toBe('AssumeRole arn:aws:iam::1:role/x failed: AccessDenied');
  });
});
