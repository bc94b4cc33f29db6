// moto's server as an IAM evaluator: set-up (IAM users, roles, policies in several accounts) runs
// with enforcement off, then `enforce()` turns it on (POST /moto-api/reset-auth 0, the server-mode
// form of INITIAL_NO_AUTH_ACTION_COUNT=0): from then on every request must be signed by a known
// key and is checked against the caller's identity policies (what moto can and cannot evaluate:
// docs/install.md#what-is-proven-and-how).
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { startMoto } from '../../../packages/cloudmap-emulator/test/contract/moto-server.js';
import { deployDir } from './helm.js';

export interface Statement {
  Action: string | string[];
  Resource?: string | string[];
  Principal?: unknown;
  Condition?: unknown;
}
export interface Policy {
  Statement: Statement[];
}

/** A deploy/iam document with its ${PLACEHOLDERS} filled; every one must be given. */
export function filled(file: string, vars: Record<string, string>): Policy {
  const text = readFileSync(join(deployDir, 'iam', file), 'utf8').replace(
    /\$\{(\w+)\}/g,
    (_, key: string) => {
      const v = vars[key];
      if (v === undefined) throw new Error(`${file}: no value for \${${key}}`);
      return v;
    },
  );
  return JSON.parse(text) as Policy;
}

/** Cloud Map statements' Resource widened to "*": moto matches Cloud Map calls against "*". */
export const forMoto = (p: Policy): Policy => ({
  ...p,
  Statement: p.Statement.map((s) =>
    [s.Action].flat().every((a) => a.startsWith('servicediscovery:')) ? { ...s, Resource: '*' } : s,
  ),
});

/** The Cloud Map actions a policy allows, without the `servicediscovery:` prefix, sorted. */
export const cloudMapActions = (p: Policy): string[] =>
  [
    ...new Set(
      p.Statement.flatMap((s) => [s.Action].flat())
        .filter((a) => a.startsWith('servicediscovery:'))
        .map((a) => a.slice('servicediscovery:'.length)),
    ),
  ].sort();

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

/** One request forwarded by the proxy, as moto's IAM evaluator saw it. */
export interface ProxiedCall {
  /** `servicediscovery:<Action>` (X-Amz-Target) or `sts:<Action>` (the query's Action). */
  action: string;
  /** The access key that signed it (Authorization's Credential). */
  accessKeyId: string;
  status: number;
  /** For sts:AssumeRole: the role asked for, and the access key of the session it answered. */
  roleArn?: string;
  sessionAccessKeyId?: string;
}

/**
 * A pass-through HTTP proxy to `target` that records the requests it forwards: which action,
 * signed by which key, answered how; for AssumeRole also the session key it handed out, so a
 * Cloud Map call can be traced to the role it ran as.
 */
export async function countingProxy(target: string): Promise<{
  url: string;
  count: () => number;
  /** The RoleSessionName of each AssumeRole forwarded. */
  sessionNames: () => string[];
  calls: () => ProxiedCall[];
  /** The role each session access key handed out by AssumeRole belongs to. */
  roleOfKey: (accessKeyId: string) => string | undefined;
  close: () => Promise<void>;
}> {
  const sessions: string[] = [];
  const calls: ProxiedCall[] = [];
  const to = new URL(target);
  const server: Server = createHttpServer((req, res) => {
    const auth = req.headers['authorization'] ?? '';
    const call: ProxiedCall = {
      action: '',
      accessKeyId: /Credential=([^/]+)\//.exec(auth)?.[1] ?? '',
      status: 0,
    };
    calls.push(call);
    const targetHeader = req.headers['x-amz-target'];
    if (typeof targetHeader === 'string')
      call.action = `servicediscovery:${targetHeader.split('.').pop() ?? ''}`;
    // Headers as sent (Host included): the request's SigV4 signature covers them.
    const out = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        call.status = answer.statusCode ?? 0;
        res.writeHead(call.status || 502, answer.headers);
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          const key = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(Buffer.concat(body).toString());
          if (call.action === 'sts:AssumeRole' && key?.[1] !== undefined)
            call.sessionAccessKeyId = key[1];
        });
        answer.pipe(res);
      },
    );
    out.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    const sent: Buffer[] = [];
    req.on('data', (chunk: Buffer) => sent.push(chunk));
    req.on('end', () => {
      if (call.action !== '') return;
      const form = new URLSearchParams(Buffer.concat(sent).toString());
      call.action = `sts:${form.get('Action') ?? '?'}`;
      const name = form.get('RoleSessionName');
      if (name !== null) sessions.push(name);
      const role = form.get('RoleArn');
      if (role !== null) call.roleArn = role;
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => calls.length,
    sessionNames: () => [...sessions],
    calls: () => calls.map((c) => ({ ...c })),
    roleOfKey: (key) =>
      calls.find((c) => c.sessionAccessKeyId === key && c.sessionAccessKeyId !== undefined)
        ?.roleArn,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
