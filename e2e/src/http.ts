import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpResult {
  readonly status: number;
  readonly body: string;
}

/** A small GET for health probes: token auth and a pinned CA, or no verification for probes of self-signed component ports. */
export function httpGet(
  url: string,
  opts: { ca?: string; token?: string; insecure?: boolean; timeoutMs?: number } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
    const common = { method: 'GET', headers, timeout: opts.timeoutMs ?? 5_000 };
    const req =
      u.protocol === 'https:'
        ? httpsRequest(u, {
            ...common,
            ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
            rejectUnauthorized: opts.insecure !== true,
          })
        : httpRequest(u, common);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
