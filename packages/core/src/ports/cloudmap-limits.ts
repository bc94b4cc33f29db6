/**
 * Cloud Map's documented input limits (shared/reference/cloudmap-api.md §2–§3), as pure
 * checks. The fake port enforces them like the service does (InvalidInput), and planners can
 * use them to turn "does not fit" into a condition instead of a failed call (DESIGN.md §4).
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
} as const;

const instanceIdPattern = /^[0-9a-zA-Z_/:.@-]+$/;
const attrKeyPattern = /^[!-~]+$/;
// Printable ASCII; spaces and tabs allowed after the first character, not leading.
const attrValuePattern = /^(?:[!-~][ \t!-~]*)?$/;
const serviceLabel = '(?:[a-zA-Z0-9_][a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])';
const serviceNamePattern = new RegExp(`^(?:${serviceLabel}(?:\\.${serviceLabel})*|\\.)$`);
const namespaceNamePattern = /^(?!arn:)[!-~]{1,1024}$/;

/** Reserved attribute keys; they do not count toward the 30 custom attributes (inferred). */
export const isReservedAttributeKey = (key: string): boolean => key.startsWith('AWS_');

/** Returns a description of the first violated limit, or undefined when the ID is valid. */
export function checkInstanceId(id: string): string | undefined {
  if (id.length === 0 || id.length > cloudMapLimits.instanceIdMaxLength)
    return `instance id must be 1-${cloudMapLimits.instanceIdMaxLength} characters, got ${id.length}`;
  if (!instanceIdPattern.test(id))
    return `instance id ${JSON.stringify(id)} has invalid characters`;
  return undefined;
}

export function checkAttributes(attributes: Record<string, string>): string | undefined {
  let custom = 0;
  let total = 0;
  for (const [key, value] of Object.entries(attributes)) {
    if (key.length > cloudMapLimits.attributeKeyMaxLength || !attrKeyPattern.test(key))
      return `attribute key ${JSON.stringify(key.slice(0, 64))} is invalid`;
    if (value.length > cloudMapLimits.attributeValueMaxLength)
      return `attribute ${key} is ${value.length} characters, over ${cloudMapLimits.attributeValueMaxLength}`;
    if (!attrValuePattern.test(value)) return `attribute ${key} has an invalid value`;
    if (!isReservedAttributeKey(key)) custom += 1;
    total += key.length + value.length;
  }
  if (custom > cloudMapLimits.customAttributesPerInstance)
    return `${custom} custom attributes, over ${cloudMapLimits.customAttributesPerInstance}`;
  if (total > cloudMapLimits.attributesTotalMaxLength)
    return `attributes total ${total} characters, over ${cloudMapLimits.attributesTotalMaxLength}`;
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
