import { InvalidInput } from './errors.js';
import { optInt, optString, LIMITS, type Json } from './validate.js';

/**
 * NextToken paging in the way the real service documents it: take MaxResults items in order,
 * *then* apply the filters, so a page may be empty and still carry a NextToken. The token is
 * an opaque cursor on the ordering key of the last item scanned, so deleting items between
 * pages neither repeats nor skips the rest.
 */
export interface Page<T> {
  items: T[];
  nextToken: string | undefined;
}

export function paginate<T>(
  all: readonly T[],
  key: (item: T) => string,
  input: Json,
  scope: string,
  keep: (item: T) => boolean = () => true,
): Page<T> {
  const max = optInt(input, 'MaxResults', 1, 100) ?? 100;
  const token = optString(input, 'NextToken', { max: LIMITS.nextToken });
  const after = token === undefined ? undefined : decodeToken(token, scope);
  // Keys are computed once per item, not once per comparison; the stores keep insertion
  // (creation) order, so the sort is usually skipped.
  const sorted = all.map((item) => ({ item, k: key(item) }));
  if (sorted.some((e, i) => i > 0 && compare(sorted[i - 1]!.k, e.k) > 0)) {
    sorted.sort((a, b) => compare(a.k, b.k));
  }
  const start = after === undefined ? 0 : sorted.findIndex((e) => compare(e.k, after) > 0);
  const remaining = start < 0 ? [] : sorted.slice(start);
  const scanned = remaining.slice(0, max);
  const last = scanned.at(-1);
  const nextToken =
    remaining.length > max && last !== undefined ? encodeToken(last.k, scope) : undefined;
  return { items: scanned.map((e) => e.item).filter(keep), nextToken };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function encodeToken(after: string, scope: string): string {
  return Buffer.from(JSON.stringify({ s: scope, a: after })).toString('base64url');
}

function decodeToken(token: string, scope: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (parsed && typeof parsed === 'object' && 's' in parsed && 'a' in parsed) {
      if (parsed.s === scope && typeof parsed.a === 'string') return parsed.a;
    }
  } catch {
    // fall through: any undecodable token is the caller's error
  }
  throw new InvalidInput('Invalid NextToken');
}

/** Sort key that orders by creation time, then by ID for equal times. */
export const timeKey = (ms: number, id: string): string => `${String(ms).padStart(15, '0')}:${id}`;
