import { request } from 'node:http';

/** What `GET /leader` on an agent's health port answers (ADR 0019). */
export interface LeaderStatus {
  /** The Lease, `namespace/name`. */
  lease: string;
  /** This replica's identity (the Lease holder's when it leads). */
  identity: string;
  /** Whether this replica leads that Lease now. */
  leading: boolean;
}

/** How long asking a leader (a standby, the export agent) may take. */
export const LEADER_PROBE_TIMEOUT_MS = 1_500;

/** The longest `/leader` answer read; anything longer is not one. */
const MAX_ANSWER_BYTES = 4096;

/** The answer of `GET /leader`, or why there is none usable (pure: tested on its own). */
export function parseLeaderStatus(text: string): LeaderStatus | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'not an object';
  const { lease, identity, leading } = value as Record<string, unknown>;
  if (typeof lease !== 'string' || typeof identity !== 'string' || typeof leading !== 'boolean')
    return 'not {lease, identity, leading}';
  return { lease, identity, leading };
}

/**
 * One request to another agent's health port (`address`: `host:port`, an IP literal as
 * published on a Lease or in the change feed), answer body read up to `maxBytes`. Plain
 * node:http, not fetch: fetch loads Node's own copy of undici, a megabyte or two of RSS that
 * nothing else in an agent needs (ADR 0016). Rejects on connection errors and on no answer
 * within `timeoutMs`.
 */
export function peerRequest(
  address: string,
  path: string,
  opts: { method: 'GET' | 'POST'; body?: string; timeoutMs: number; maxBytes?: number },
): Promise<{ status: number; body: string; truncated: boolean }> {
  const maxBytes = opts.maxBytes ?? MAX_ANSWER_BYTES;
  return new Promise((resolve, reject) => {
    const headers =
      opts.body === undefined
        ? {}
        : {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(opts.body)),
          };
    const req = request(
      new URL(`http://${address}${path}`),
      { method: opts.method, headers, timeout: opts.timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= maxBytes) chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            truncated: size > maxBytes,
          }),
        );
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within ${String(opts.timeoutMs)} ms`)),
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Asks the agent at `address` whether it leads `expected.lease` as `expected.identity`.
 * Resolves when it does; rejects with the reason otherwise (unreachable, timed out, another
 * replica or Lease, not leading).
 */
export async function probeLeader(
  address: string,
  expected: { lease: string; identity: string },
  timeoutMs: number,
): Promise<void> {
  const answer = await peerRequest(address, '/leader', { method: 'GET', timeoutMs });
  if (answer.status !== 200) throw new Error(`GET /leader answered HTTP ${String(answer.status)}`);
  if (answer.truncated) throw new Error('GET /leader answer too long');
  const status = parseLeaderStatus(answer.body);
  if (typeof status === 'string') throw new Error(`GET /leader: ${status}`);
  if (status.lease !== expected.lease)
    throw new Error(`${address} serves the Lease ${status.lease}, not ${expected.lease}`);
  if (status.identity !== expected.identity)
    throw new Error(`${address} is ${status.identity}, not ${expected.identity}`);
  if (!status.leading) throw new Error(`${status.identity} does not lead now`);
}
