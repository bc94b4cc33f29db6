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
  externalId?: string;
  sessionName?: string;
  durationSeconds?: number;
}

export interface AssumeRoleOptions extends AssumeRoleConfig {
  region?: string;
  /** Credentials used to call STS; the default chain when absent. */
  baseCredentials?: CredentialsProvider;
  /** For tests: the STS client to use and the time source. */
  sts?: Pick<STSClient, 'send'>;
  now?: () => number;
}

/** A failed AssumeRole; the message names the role, never the credentials. */
export class AssumeRoleError extends Error {
  override readonly name = 'AssumeRoleError';
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
  const sts =
    options.sts ??
    new STSClient({
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.baseCredentials === undefined ? {} : { credentials: options.baseCredentials }),
    });
  let cached: AwsCredentials | undefined;
  let inflight: Promise<AwsCredentials> | undefined;

  const assume = async (): Promise<AwsCredentials> => {
    try {
      const res = await sts.send(
        new AssumeRoleCommand({
          RoleArn: options.roleArn,
          RoleSessionName: options.sessionName ?? 'cloudmap-mcs',
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
      throw new AssumeRoleError(`AssumeRole ${options.roleArn} failed: ${name}`, { cause: error });
    }
  };

  return async () => {
    const exp = cached?.expiration?.getTime();
    if (cached !== undefined && (exp === undefined || exp - margin > now())) return cached;
    inflight ??= assume().finally(() => {
      inflight = undefined;
    });
    cached = await inflight;
    return cached;
  };
}
