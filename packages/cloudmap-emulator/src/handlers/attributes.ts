import { isIPv4, isIPv6 } from 'node:net';
import { InvalidInput } from '../errors.js';
import {
  RESERVED_ATTRIBUTE_KEYS,
  type NamespaceRecord,
  type Quotas,
  type ServiceRecord,
} from '../model.js';

/** `!-~` in the model is the character range 0x21–0x7E, not three literal characters. */
const KEY = /^[!-~]+$/;
/** Printable ASCII; spaces and tabs allowed after the first character; may be empty. */
const VALUE = /^([!-~][ \t!-~]*)?[!-~]?$/;
const MAX_TOTAL = 5000;

/**
 * RegisterInstance's attribute rules: per-key and per-value limits, 30 custom attributes,
 * 5,000 characters in total, and the reserved AWS_* keys that the service's DNS records and
 * health check need (RegisterInstance.Attributes doc).
 */
export function checkAttributes(
  attrs: Record<string, string>,
  ns: NamespaceRecord,
  svc: ServiceRecord,
  quotas: Quotas,
): void {
  let total = 0;
  let custom = 0;
  for (const [key, value] of Object.entries(attrs)) {
    if (key.length > 255 || !KEY.test(key))
      throw new InvalidInput(`Attribute key '${key}' is invalid`);
    if (value.length > 1024)
      throw new InvalidInput(`Attribute value for '${key}' exceeds 1024 characters`);
    if (!VALUE.test(value))
      throw new InvalidInput(`Attribute value for '${key}' has invalid characters`);
    total += key.length + value.length;
    if (!RESERVED_ATTRIBUTE_KEYS.has(key)) custom += 1;
  }
  if (custom > quotas.customAttributesPerInstance) {
    throw new InvalidInput(
      `An instance can have at most ${quotas.customAttributesPerInstance} custom attributes`,
    );
  }
  if (total > MAX_TOTAL)
    throw new InvalidInput(`The total size of all attributes exceeds ${MAX_TOTAL} characters`);

  const has = (k: string): boolean => attrs[k] !== undefined;
  const ipv4 = attrs['AWS_INSTANCE_IPV4'];
  const ipv6 = attrs['AWS_INSTANCE_IPV6'];
  const port = attrs['AWS_INSTANCE_PORT'];
  const init = attrs['AWS_INIT_HEALTH_STATUS'];
  if (ipv4 !== undefined && !isIPv4(ipv4))
    throw new InvalidInput(`AWS_INSTANCE_IPV4 '${ipv4}' is not an IPv4 address`);
  if (ipv6 !== undefined && !isIPv6(ipv6))
    throw new InvalidInput(`AWS_INSTANCE_IPV6 '${ipv6}' is not an IPv6 address`);
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) > 65535)) {
    throw new InvalidInput(`AWS_INSTANCE_PORT '${port}' is not a port number`);
  }
  if (init !== undefined && init !== 'HEALTHY' && init !== 'UNHEALTHY') {
    throw new InvalidInput('AWS_INIT_HEALTH_STATUS must be HEALTHY or UNHEALTHY');
  }
  if (has('AWS_EC2_INSTANCE_ID')) {
    if (ns.type !== 'HTTP')
      throw new InvalidInput('AWS_EC2_INSTANCE_ID is supported only in HTTP namespaces');
    const others = Object.keys(attrs).filter(
      (k) => k !== 'AWS_EC2_INSTANCE_ID' && k !== 'AWS_INIT_HEALTH_STATUS',
    );
    if (others.length > 0) {
      throw new InvalidInput(
        'With AWS_EC2_INSTANCE_ID the only other attribute allowed is AWS_INIT_HEALTH_STATUS',
      );
    }
  }
  const records = new Set(svc.dnsConfig?.DnsRecords.map((r) => r.Type) ?? []);
  const alias = has('AWS_ALIAS_DNS_NAME');
  if (alias) {
    if (Object.keys(attrs).some((k) => k.startsWith('AWS_INSTANCE_'))) {
      throw new InvalidInput(
        'AWS_ALIAS_DNS_NAME cannot be combined with AWS_INSTANCE_* attributes',
      );
    }
    if (svc.dnsConfig?.RoutingPolicy !== 'WEIGHTED' || !(records.has('A') || records.has('AAAA'))) {
      throw new InvalidInput(
        'AWS_ALIAS_DNS_NAME requires A or AAAA records and the WEIGHTED routing policy',
      );
    }
  }
  const need = (key: string, why: string): void => {
    if (!has(key)) throw new InvalidInput(`${key} is required because ${why}`);
  };
  if (records.has('A') && !alias) need('AWS_INSTANCE_IPV4', 'the service has an A record');
  if (records.has('AAAA') && !alias) need('AWS_INSTANCE_IPV6', 'the service has an AAAA record');
  if (records.has('CNAME')) need('AWS_INSTANCE_CNAME', 'the service has a CNAME record');
  if (records.has('SRV')) {
    need('AWS_INSTANCE_PORT', 'the service has an SRV record');
    if (!has('AWS_INSTANCE_IPV4') && !has('AWS_INSTANCE_IPV6')) {
      throw new InvalidInput(
        'AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6 is required because the service has an SRV record',
      );
    }
  }
  if (svc.healthCheckConfig) need('AWS_INSTANCE_PORT', 'the service has a Route 53 health check');
}
