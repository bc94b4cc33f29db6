// moto's server as an IAM evaluator: set-up (IAM users, roles, policies in several accounts) runs
// with enforcement off, then `enforce()` turns it on (POST /moto-api/reset-auth 0, the server-mode
// form of INITIAL_NO_AUTH_ACTION_COUNT=0): from then on every request must be signed by a known
// key and is checked against the caller's identity policies (what moto can and cannot evaluate:
// docs/install.md#what-is-proven-and-how).
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { startMoto } from '../../../packages/cloudmap-emulator/test/contract/moto-server.js';

export interface Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface MotoIam {
  url: string;
  /** IAM enforcement on, from the next request. */
  enforce(): Promise<void>;
  /** An IAM user of `account` with these inline policies, and an access key of it. */
  user(account: string, name: string, policies: Record<string, unknown>): Promise<Keys>;
  /** A role of `account` with this trust policy and these inline policies; its ARN. */
  role(
    account: string,
    name: string,
    trust: unknown,
    policies: Record<string, unknown>,
  ): Promise<string>;
  stop(): Promise<void>;
}

const tag = (xml: string, name: string): string => {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (m?.[1] === undefined) throw new Error(`moto: no <${name}> in ${xml.slice(0, 400)}`);
  return m[1];
};

export async function startMotoIam(): Promise<MotoIam> {
  // The same server start-up as the emulator's contract suite (tools/moto.sh, free port, ready).
  const moto = await startMoto();
  const { url } = moto;

  // IAM's query API, unsigned (enforcement is still off); the account is chosen by moto's
  // x-moto-account-id header, the service by the credential scope.
  const iam = async (account: string, params: Record<string, string>): Promise<string> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-moto-account-id': account,
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: new URLSearchParams({ Version: '2010-05-08', ...params }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`moto IAM ${params['Action']}: ${res.status} ${text}`);
    return text;
  };

  return {
    url,
    enforce: async () => {
      const res = await fetch(`${url}/moto-api/reset-auth`, { method: 'POST', body: '0' });
      if (!res.ok) throw new Error(`moto reset-auth: ${res.status}`);
    },
    user: async (account, name, policies) => {
      await iam(account, { Action: 'CreateUser', UserName: name });
      for (const [policyName, doc] of Object.entries(policies))
        await iam(account, {
          Action: 'PutUserPolicy',
          UserName: name,
          PolicyName: policyName,
          PolicyDocument: JSON.stringify(doc),
        });
      const key = await iam(account, { Action: 'CreateAccessKey', UserName: name });
      return {
        accessKeyId: tag(key, 'AccessKeyId'),
        secretAccessKey: tag(key, 'SecretAccessKey'),
      };
    },
    role: async (account, name, trust, policies) => {
      const created = await iam(account, {
        Action: 'CreateRole',
        RoleName: name,
        AssumeRolePolicyDocument: JSON.stringify(trust),
      });
      for (const [policyName, doc] of Object.entries(policies))
        await iam(account, {
          Action: 'PutRolePolicy',
          RoleName: name,
          PolicyName: policyName,
          PolicyDocument: JSON.stringify(doc),
        });
      return tag(created, 'Arn');
    },
    stop: () => moto.stop(),
  };
}

/** A pass-through HTTP proxy to `target` that counts the requests it forwards (STS calls). */
export async function countingProxy(target: string): Promise<{
  url: string;
  count: () => number;
  /** The RoleSessionName of each AssumeRole forwarded. */
  sessionNames: () => string[];
  close: () => Promise<void>;
}> {
  let n = 0;
  const sessions: string[] = [];
  const to = new URL(target);
  const server: Server = createHttpServer((req, res) => {
    n += 1;
    // Headers as sent (Host included): the request's SigV4 signature covers them.
    const out = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.on('data', (chunk: Buffer) => {
      const name = new URLSearchParams(chunk.toString()).get('RoleSessionName');
      if (name !== null) sessions.push(name);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => n,
    sessionNames: () => [...sessions],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
