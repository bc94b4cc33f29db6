import { createHash } from 'node:crypto';

/**
 * Deterministic names for what the import agent creates (docs/contributing.md#idempotence): the
 * same inputs give the same name in every replica and after every restart, so "already exists" is
 * the object we want, never a stranger's.
 */

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** Lower-case base32hex of sha256(input), truncated: DNS-label safe, collision-resistant enough. */
export function shortHash(input: string, length = 10): string {
  const digest = createHash('sha256').update(input).digest();
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length >= length) break;
  }
  return out;
}

/**
 * The derived Service of a ServiceImport. Same scheme as the mcs-api reference controller
 * (`derived-` + 10 base32hex chars of sha256("<ns>/<name>")): short, a valid DNS label, and
 * stable for the life of the import, so its ClusterIP (the clusterset IP) is too.
 */
export function derivedServiceName(namespace: string, name: string): string {
  return `derived-${shortHash(`${namespace}/${name}`)}`;
}

/**
 * One EndpointSlice of a derived Service. `group` identifies (source cluster, address type,
 * ports); `index` numbers the slices of that group. The name never embeds the raw cluster id,
 * which may be long, so it always fits the 253-character limit.
 */
export function endpointSliceName(derivedName: string, group: string, index: number): string {
  return `${derivedName}-${shortHash(group, 8)}-${index}`;
}

/** Parses the index back out of a name made by `endpointSliceName` for the same prefix. */
export function endpointSliceIndex(
  sliceName: string,
  derivedName: string,
  group: string,
): number | undefined {
  const prefix = `${derivedName}-${shortHash(group, 8)}-`;
  if (!sliceName.startsWith(prefix)) return undefined;
  const rest = sliceName.slice(prefix.length);
  if (!/^(0|[1-9][0-9]{0,5})$/.test(rest)) return undefined;
  return Number(rest);
}
