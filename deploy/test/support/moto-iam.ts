// moto's server as an IAM evaluator: set-up (IAM users, roles, policies in several accounts) runs
// with enforcement off, then `enforce()` turns it on (POST /moto-api/reset-auth 0, the server-mode
// form of INITIAL_NO_AUTH_ACTION_COUNT=0): from then on every request must be signed by a known
// key and is checked against the caller's identity policies (what moto can and cannot evaluate:
// docs/install.md#what-is-proven-and-how).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './helm.js';

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const tag = (xml: string, name: string): string => {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (m?.[1] === undefined) throw new Error(`moto: no <${name}> in ${xml.slice(0, 400)}`);
  return m[1];
};

export async function startMotoIam(): Promise<MotoIam> {
  const { stdout } = await promisify(execFile)(join(repoRoot, 'tools/moto.sh'), ['--print-bin']);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(stdout.trim(), ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited: ${stderr}`);
    const ok = await fetch(`${url}/moto-api/reset`, { method: 'POST' }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not answer within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

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
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
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
