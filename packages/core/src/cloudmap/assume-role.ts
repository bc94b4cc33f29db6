import { createHash } from 'node:crypto';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** The SDK's AwsCredentialIdentityProvider shape, without depending on @smithy/types. */
export type CredentialsProvider = () => Promise<AwsCredentials>;

export interface AssumeRoleConfig {
  roleArn: string;
  /** Required by many cross-account trust policies (confused-deputy protection). */
  externalId?: string | undefined;
  /**
   * RoleSessionName, read at each AssumeRole (the cluster id may be learnt after start):
   * CloudTrail in the role's account shows it as the caller (`assumed-role/ROLE/SESSION`).
   */
  sessionName?: string | (() => string);
  durationSeconds?: number;
}

export interface AssumeRoleOptions extends AssumeRoleConfig {
  region?: string | undefined;
  /** Credentials used to call STS; the default chain when absent. */
  baseCredentials?: CredentialsProvider | undefined;
  /**
   * After a refused AssumeRole (wrong ExternalId, role or account), callers within this long get
   * the same error without asking STS again: every Cloud Map call needs credentials, and a
   * refusal is not fixed by asking again at once. Default 30 s.
   */
  failureBackoffMs?: number;
  /** For tests: the STS client to use and the time source. */
  sts?: Pick<STSClient, 'send'>;
  now?: () => number;
}

/** A failed AssumeRole; the message names the role, never the credentials. */
export class AssumeRoleError extends Error {
  override readonly name = 'AssumeRoleError';
}

/** STS's RoleSessionName: 2 to 64 characters of [\w+=,.@-]. */
const SESSION_NAME_MAX = 64;
const sessionUnsafe = /[^\w+=,.@-]/g;

/**
 * The RoleSessionName of an agent's AssumeRole: `cloudmap-mcs-<agent>-<clusterId>` (agent
 * `export` or `import`), so CloudTrail in the registry account says which cluster and agent
 * made each call. Characters STS refuses become `-`; a name over 64 characters keeps its start
 * and ends with 8 hex digits of the full name's SHA-256, so two long cluster ids that share a
 * prefix still give two names. Without a cluster id (not known yet): `cloudmap-mcs-<agent>`.
 */
export function roleSessionName(agent: string, clusterId?: string): string {
  const short = agent.replace(/-agent$/, '');
  const full = (
    clusterId === undefined || clusterId === ''
      ? `cloudmap-mcs-${short}`
      : `cloudmap-mcs-${short}-${clusterId}`
  ).replace(sessionUnsafe, '-');
  if (full.length <= SESSION_NAME_MAX) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, SESSION_NAME_MAX - hash.length - 1)}-${hash}`;
}

/**
 * A credentials provider that assumes `roleArn` with STS and caches the temporary
 * credentials until 5 minutes before they expire (like the SDK's
 * fromTemporaryCredentials, built on STSClient as docs/architecture.md#security says). Concurrent
 * callers share one AssumeRole call. The credentials are never logged or put in error messages.
 */
export function createAssumeRoleCredentials(options: AssumeRoleOptions): CredentialsProvider {
  const now = options.now ?? Date.now;
  const margin = 5 * 60_000;
  const failureBackoff = options.failureBackoffMs ?? 30_000;
  const sts =
    options.sts ??
    new STSClient({
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.baseCredentials === undefined ? {} : { credentials: options.baseCredentials }),
    });
  let cached: AwsCredentials | undefined;
  let inflight: Promise<AwsCredentials> | undefined;
  let failed: { error: AssumeRoleError; atMs: number } | undefined;
  const sessionName = (): string => {
    const n = options.sessionName;
    return typeof n === 'function' ? n() : (n ?? 'cloudmap-mcs');
  };

  const assume = async (): Promise<AwsCredentials> => {
    try {
      const res = await sts.send(
        new AssumeRoleCommand({
          RoleArn: options.roleArn,
          RoleSessionName: sessionName(),
          DurationSeconds: options.durationSeconds ?? 3600,
          ...(options.externalId === undefined ? {} : { ExternalId: options.externalId }),
        }),
      );
      const c = res.Credentials;
      if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined)
        throw new AssumeRoleError(`AssumeRole ${options.roleArn} returned no credentials`);
      return {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        ...(c.SessionToken === undefined ? {} : { sessionToken: c.SessionToken }),
        ...(c.Expiration === undefined ? {} : { expiration: c.Expiration }),
      };
    } catch (error) {
      if (error instanceof AssumeRoleError) throw error;
      const name = error instanceof Error ? error.name : 'Error';
      const hint =
        name === 'AccessDenied'
          ? ": the role's trust policy must name this agent's role and the ExternalId given " +
            '(--assume-role-external-id), and the policy of the role the agent runs as must allow ' +
            'sts:AssumeRole on it (deploy/iam/cross-account-assume-role.json)'
          : '';
      throw new AssumeRoleError(`AssumeRole ${options.roleArn} failed: ${name}${hint}`, {
        cause: error,
      });
    }
  };

  return async () => {
    const exp = cached?.expiration?.getTime();
    if (cached !== undefined && (exp === undefined || exp - margin > now())) return cached;
    if (failed !== undefined && now() - failed.atMs < failureBackoff) throw failed.error;
    inflight ??= assume()
      .then(
        (c) => {
          failed = undefined;
          return c;
        },
        (error: unknown) => {
          failed = { error: error as AssumeRoleError, atMs: now() };
          throw error;
        },
      )
      .finally(() => {
        inflight = undefined;
      });
    cached = await inflight;
    return cached;
  };
}
