import { InvalidInput, SerializationException } from './errors.js';

/**
 * Typed reads from a request body with Coral-style InvalidInput messages, so every handler
 * validates the same way and a wrong type never reaches the state.
 */
export type Json = Record<string, unknown>;

const constraint = (value: unknown, path: string, rule: string): InvalidInput =>
  new InvalidInput(
    `1 validation error detected: Value ${value === undefined ? 'null' : JSON.stringify(value)} at '${path}' failed to satisfy constraint: ${rule}`,
  );

export function asObject(value: unknown, path: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SerializationException(`Expected an object at '${path}'`);
  }
  return value as Json;
}

interface StringRule {
  min?: number;
  max?: number;
  pattern?: RegExp;
  oneOf?: readonly string[];
}

function checkString(value: unknown, path: string, rule: StringRule): string {
  if (typeof value !== 'string') throw new SerializationException(`Expected a string at '${path}'`);
  const min = rule.min ?? 0;
  if (value.length < min || (rule.max !== undefined && value.length > rule.max)) {
    throw constraint(
      value,
      path,
      `Member must have length between ${min} and ${rule.max ?? 'unbounded'}`,
    );
  }
  if (rule.pattern && !rule.pattern.test(value)) {
    throw constraint(
      value,
      path,
      `Member must satisfy regular expression pattern: ${rule.pattern.source}`,
    );
  }
  if (rule.oneOf && !rule.oneOf.includes(value)) {
    throw constraint(value, path, `Member must satisfy enum value set: [${rule.oneOf.join(', ')}]`);
  }
  return value;
}

export function reqString(obj: Json, key: string, rule: StringRule = {}, path = key): string {
  const value = obj[key];
  if (value === undefined || value === null)
    throw constraint(undefined, path, 'Member must not be null');
  return checkString(value, path, rule);
}

export function optString(
  obj: Json,
  key: string,
  rule: StringRule = {},
  path = key,
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  return checkString(value, path, rule);
}

export function optInt(
  obj: Json,
  key: string,
  min: number,
  max: number,
  path = key,
): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new SerializationException(`Expected an integer at '${path}'`);
  }
  if (value < min || value > max) {
    throw constraint(value, path, `Member must have value between ${min} and ${max}`);
  }
  return value;
}

export function optArray(obj: Json, key: string, path = key): unknown[] | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new SerializationException(`Expected a list at '${path}'`);
  return value;
}

export function optObject(obj: Json, key: string, path = key): Json | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  return asObject(value, path);
}

/** A string→string map (Attributes, QueryParameters…); values are checked by the caller. */
export function optStringMap(
  obj: Json,
  key: string,
  path = key,
): Record<string, string> | undefined {
  const value = optObject(obj, key, path);
  if (value === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string')
      throw new SerializationException(`Expected a string at '${path}.${k}'`);
    out[k] = v;
  }
  return out;
}

/** Shared shape limits from the API model. */
export const LIMITS = {
  resourceId: 64,
  arn: 255,
  operationId: 255,
  nextToken: 4096,
  description: 1024,
} as const;

/** ID-or-ARN inputs (type Arn, ≤255 since cross-account sharing). */
export const idOrArn = (obj: Json, key: string): string =>
  reqString(obj, key, { min: 1, max: LIMITS.arn });

export function reqArray(obj: Json, key: string, path = key): unknown[] {
  const value = optArray(obj, key, path);
  if (value === undefined) throw constraint(undefined, path, 'Member must not be null');
  return value;
}

export function reqObject(obj: Json, key: string, path = key): Json {
  const value = optObject(obj, key, path);
  if (value === undefined) throw constraint(undefined, path, 'Member must not be null');
  return value;
}
