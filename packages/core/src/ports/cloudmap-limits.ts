/**
 * Cloud Map's record grammar: its documented input limits and character sets
 * (docs/architecture.md#cloud-map-facts), as pure checks. This is the one table: the record
 * codec checks what it writes against it (records/limits.ts turns "does not fit" into a
 * condition, docs/cloudmap-schema.md#limits--never-truncated), the trust boundary refuses what it
 * reads against it (planning/trust.ts), and the fake port enforces it like the service does
 * (InvalidInput).
 */

export const cloudMapLimits = {
  instanceIdMaxLength: 64,
  customAttributesPerInstance: 30,
  attributeKeyMaxLength: 255,
  attributeValueMaxLength: 1024,
  attributesTotalMaxLength: 5000,
  instancesPerService: 1000,
  serviceNameMaxLength: 127,
  httpNamespaceNameMaxLength: 1024,
  discoverMaxResults: 1000,
  listServicesPageSize: 100,
} as const;

/** ListServices calls a listing of `services` services takes (at least one). */
export const listServicesPages = (services: number): number =>
  Math.max(1, Math.ceil(services / cloudMapLimits.listServicesPageSize));

export const instanceIdPattern = /^[0-9a-zA-Z_/:.@-]+$/;
export const attributeKeyPattern = /^[!-~]+$/;
/** Printable ASCII; spaces and tabs allowed after the first character, not leading. */
export const attributeValuePattern = /^(?:[!-~][ \t!-~]*)?$/;
const serviceLabel = '(?:[a-zA-Z0-9_][a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])';
const serviceNamePattern = new RegExp(`^(?:${serviceLabel}(?:\\.${serviceLabel})*|\\.)$`);
const namespaceNamePattern = /^(?!arn:)[!-~]{1,1024}$/;

/** Returns a description of the first violated limit, or undefined when the ID is valid. */
export function checkInstanceId(id: string): string | undefined {
  if (id.length === 0 || id.length > cloudMapLimits.instanceIdMaxLength)
    return `instance id must be 1-${cloudMapLimits.instanceIdMaxLength} characters, got ${id.length}`;
  if (!instanceIdPattern.test(id))
    return `instance id ${JSON.stringify(id)} has invalid characters`;
  return undefined;
}

/** The sum of the lengths of every key and value (Cloud Map's 5,000-character total). */
export const attributesTotalLength = (attributes: Readonly<Record<string, string>>): number =>
  Object.entries(attributes).reduce((n, [k, v]) => n + k.length + v.length, 0);

/** The first attribute limit violated, or undefined; `attributes` may be untrusted data. */
export function checkAttributes(attributes: Readonly<Record<string, string>>): string | undefined {
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value !== 'string') return `attribute ${key.slice(0, 40)} is not a string`;
    if (key.length > cloudMapLimits.attributeKeyMaxLength || !attributeKeyPattern.test(key))
      return 'malformed attribute key';
    if (value.length > cloudMapLimits.attributeValueMaxLength)
      return `attribute ${key} longer than ${cloudMapLimits.attributeValueMaxLength}`;
    if (!attributeValuePattern.test(value)) return `attribute ${key} has non-printable characters`;
  }
  // Reserved (AWS_) keys do not count toward the 30 custom attributes (inferred).
  const custom = Object.keys(attributes).filter((k) => !k.startsWith('AWS_')).length;
  if (custom > cloudMapLimits.customAttributesPerInstance) return `${custom} custom attributes`;
  const total = attributesTotalLength(attributes);
  if (total > cloudMapLimits.attributesTotalMaxLength)
    return `attributes total ${total} characters`;
  return undefined;
}

export function checkServiceName(name: string): string | undefined {
  if (name.length > cloudMapLimits.serviceNameMaxLength || !serviceNamePattern.test(name))
    return `service name ${JSON.stringify(name.slice(0, 64))} is not a valid Cloud Map service name`;
  return undefined;
}

export function checkHttpNamespaceName(name: string): string | undefined {
  if (!namespaceNamePattern.test(name))
    return `namespace name ${JSON.stringify(name.slice(0, 64))} is not a valid HTTP namespace name`;
  return undefined;
}
