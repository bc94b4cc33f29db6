import { isIPv4, isIPv6 } from 'node:net';
import type {
  AddressType,
  ClusterIdentity,
  EndpointPort,
  InternalTrafficPolicy,
  IPFamily,
  Protocol,
  ServiceImportType,
  ServicePort,
  SessionAffinity,
} from '../model/index.js';
import { Attr, SCHEMA_VERSION } from './attributes.js';

/**
 * Strict readers for attribute values. Records come from other clusters (and possibly other
 * implementations), so every value is validated; a bad value rejects the instance with a reason
 * instead of throwing or guessing.
 */
export class RecordParseError extends Error {
  override readonly name = 'RecordParseError';
}

type Attrs = Readonly<Record<string, string>>;

/**
 * Runs `decode`; when it throws RecordParseError the instance and the reason go to `rejected`
 * (bad data is refused one instance at a time; any other error is a bug and propagates).
 */
export function orReject(
  instanceId: string,
  rejected: { instanceId: string; reason: string }[],
  decode: () => void,
): void {
  try {
    decode();
  } catch (error) {
    if (!(error instanceof RecordParseError)) throw error;
    rejected.push({ instanceId, reason: error.message });
  }
}

/** The schema version (ours or older) and the writer's cluster, of `clustersetId` when given. */
export function parseIdentity(attrs: Attrs, clustersetId?: string): ClusterIdentity {
  const version = attrs[Attr.SchemaVersion];
  // Readers accept their own major version and older; a newer major may mean anything.
  if (version !== undefined && parseCount(version, Attr.SchemaVersion) > Number(SCHEMA_VERSION))
    throw new RecordParseError(`unsupported schema version ${version}`);
  const cluster = {
    clusterId: nonEmpty(attrs, Attr.ClusterId),
    clustersetId: nonEmpty(attrs, Attr.ClustersetId),
  };
  if (clustersetId !== undefined && cluster.clustersetId !== clustersetId)
    throw new RecordParseError(`belongs to clusterset ${cluster.clustersetId}`);
  return cluster;
}

export function required(attrs: Attrs, key: string): string {
  const value = attrs[key];
  if (value === undefined) throw new RecordParseError(`missing ${key}`);
  return value;
}

export function nonEmpty(attrs: Attrs, key: string): string {
  const value = required(attrs, key);
  if (value === '') throw new RecordParseError(`empty ${key}`);
  return value;
}

function parsePortNumber(value: string, key: string): number {
  if (!/^[0-9]{1,5}$/.test(value)) throw new RecordParseError(`${key} is not a port: ${value}`);
  const n = Number(value);
  if (n < 1 || n > 65535) throw new RecordParseError(`${key} is out of range: ${value}`);
  return n;
}

/** Non-negative integer (ms timestamps, seconds). */
export function parseCount(value: string, key: string): number {
  if (!/^[0-9]{1,16}$/.test(value)) throw new RecordParseError(`${key} is not a number: ${value}`);
  return Number(value);
}

// Go's strconv.ParseBool, which the AWS controller uses to read READY.
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export function parseBool(value: string, key: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new RecordParseError(`${key} is not a boolean: ${value}`);
}

/** `value` if it is one of `choices`; the error says `<key> is not <what>: <value>`. */
function oneOf<T extends string>(
  value: string,
  key: string,
  choices: readonly T[],
  what = choices.join(' or '),
): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new RecordParseError(`${key} is not ${what}: ${value}`);
}

const parseProtocol = (value: string, key: string): Protocol =>
  oneOf(value, key, ['TCP', 'UDP', 'SCTP'], 'a protocol');

export const parseServiceType = (value: string): ServiceImportType =>
  oneOf(value, 'SERVICE_TYPE', ['ClusterSetIP', 'Headless']);

export const parseSessionAffinity = (value: string): SessionAffinity =>
  oneOf(value, 'SESSION_AFFINITY', ['None', 'ClientIP']);

export const parseInternalTrafficPolicy = (value: string): InternalTrafficPolicy =>
  oneOf(value, 'INTERNAL_TRAFFIC_POLICY', ['Cluster', 'Local']);

export function parseIpFamilies(value: string): IPFamily[] {
  if (value === '') return [];
  const families = value.split(',');
  for (const f of families) {
    if (f !== 'IPv4' && f !== 'IPv6') throw new RecordParseError(`IP_FAMILIES has ${f}`);
  }
  if (new Set(families).size !== families.length) {
    throw new RecordParseError(`IP_FAMILIES repeats a family: ${value}`);
  }
  return families as IPFamily[];
}

/**
 * The address and its family. An instance with both attributes is read as IPv4, as the AWS Go
 * controller reads it (it takes AWS_INSTANCE_IPV4 over AWS_INSTANCE_IPV6 and logs a warning),
 * so both importers put that instance in the same family.
 */
export function parseAddress(attrs: Attrs): { address: string; addressType: AddressType } {
  const v4 = attrs['AWS_INSTANCE_IPV4'];
  const v6 = attrs['AWS_INSTANCE_IPV6'];
  if (v4 === undefined && v6 !== undefined) {
    if (!isIPv6(v6)) throw new RecordParseError(`AWS_INSTANCE_IPV6 is not IPv6: ${v6}`);
    return { address: v6, addressType: 'IPv6' };
  }
  const address = required(attrs, 'AWS_INSTANCE_IPV4');
  if (!isIPv4(address)) throw new RecordParseError(`AWS_INSTANCE_IPV4 is not IPv4: ${address}`);
  return { address, addressType: 'IPv4' };
}

function parseJson(value: string, key: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch (cause) {
    throw new RecordParseError(`${key} is not JSON`, { cause });
  }
}

export function parseStringMap(value: string, key: string): Record<string, string> {
  const parsed = parseJson(value, key);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RecordParseError(`${key} is not a JSON object`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw new RecordParseError(`${key}.${k} is not a string`);
    out[k] = v;
  }
  return out;
}

const optionalString = (o: Record<string, unknown>, k: string, key: string): string | undefined => {
  const v = o[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new RecordParseError(`${key}.${k} is not a string`);
  return v;
};

export function parsePorts(value: string, key: string): ServicePort[] {
  const parsed = parseJson(value, key);
  if (!Array.isArray(parsed)) throw new RecordParseError(`${key} is not a JSON list`);
  return parsed.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) {
      throw new RecordParseError(`${key} has a non-object entry`);
    }
    const o = item as Record<string, unknown>;
    const port: ServicePort = {
      name: optionalString(o, 'name', key) ?? '',
      protocol: parseProtocol(String(o['protocol']), `${key}.protocol`),
      port: parsePortNumber(String(o['port']), `${key}.port`),
    };
    const targetPort = optionalString(o, 'targetPort', key);
    const appProtocol = optionalString(o, 'appProtocol', key);
    if (targetPort !== undefined) port.targetPort = targetPort;
    if (appProtocol !== undefined) port.appProtocol = appProtocol;
    return port;
  });
}

export function parseEndpointPort(attrs: Attrs): EndpointPort {
  return {
    name: required(attrs, 'ENDPOINT_PORT_NAME'),
    protocol: parseProtocol(required(attrs, 'ENDPOINT_PROTOCOL'), 'ENDPOINT_PROTOCOL'),
    port: parsePortNumber(required(attrs, 'AWS_INSTANCE_PORT'), 'AWS_INSTANCE_PORT'),
  };
}

export function parseServicePort(attrs: Attrs): ServicePort {
  return {
    name: required(attrs, 'SERVICE_PORT_NAME'),
    protocol: parseProtocol(required(attrs, 'SERVICE_PROTOCOL'), 'SERVICE_PROTOCOL'),
    port: parsePortNumber(required(attrs, 'SERVICE_PORT'), 'SERVICE_PORT'),
    targetPort: required(attrs, 'SERVICE_TARGET_PORT'),
  };
}
