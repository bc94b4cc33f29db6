import { cloudMapLimits } from '../ports/cloudmap-limits.js';

/**
 * JSON in attribute values. Cloud Map values must be printable ASCII and may not start with
 * whitespace (docs/architecture.md#cloud-map-facts), so every character outside 0x21–0x7E (space
 * and tab included) is written as a JSON `\uXXXX` escape: the value stays valid JSON, contains no
 * whitespace, and can be cut anywhere.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x21-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A record with its keys sorted, so equal maps always encode to the same text. */
export function sortedRecord(map: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(map).sort()) out[key] = map[key] as string;
  return out;
}

/** `KEY`, `KEY.2`, `KEY.3`, …: the keys that carry the chunks of one long value. */
export const chunkKey = (key: string, index: number): string =>
  index === 0 ? key : `${key}.${index + 1}`;

/**
 * Splits a value longer than the 1,024-character limit over several attributes instead of
 * truncating it; whether the whole instance still fits is checked by the caller.
 */
export function putChunked(attrs: Record<string, string>, key: string, value: string): void {
  const size = cloudMapLimits.attributeValueMaxLength;
  for (let i = 0; i * size < value.length || i === 0; i++) {
    attrs[chunkKey(key, i)] = value.slice(i * size, (i + 1) * size);
  }
}

/** Joins the chunks written by `putChunked`; undefined when the key is absent. */
export function getChunked(
  attrs: Readonly<Record<string, string>>,
  key: string,
): string | undefined {
  const first = attrs[key];
  if (first === undefined) return undefined;
  let value = first;
  for (let i = 1; ; i++) {
    const next = attrs[chunkKey(key, i)];
    if (next === undefined) return value;
    value += next;
  }
}
