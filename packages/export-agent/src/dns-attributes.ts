import { Attr, type CloudMapInstance, type ServiceDnsConfig } from '@cloudmap-mcs/core';

/**
 * What a service with Route 53 records needs in every instance (ADR 0010, RegisterInstance
 * doc): AWS_INSTANCE_IPV4 for an A record, AWS_INSTANCE_IPV6 for AAAA, AWS_INSTANCE_PORT and an
 * address for SRV, and with a custom health check AWS_INIT_HEALTH_STATUS decides whether DNS
 * answers the instance.
 */

/** RFC 5737 TEST-NET-1 and RFC 6666 discard-only: addresses no client can reach. */
const PLACEHOLDER_IPV4 = '192.0.2.1';
const PLACEHOLDER_IPV6 = '100::1';
/** The discard port (RFC 863), for SRV records of the export record. */
const PLACEHOLDER_PORT = '9';

const IPV4 = 'AWS_INSTANCE_IPV4';
const IPV6 = 'AWS_INSTANCE_IPV6';
const PORT = 'AWS_INSTANCE_PORT';
const INIT_HEALTH = 'AWS_INIT_HEALTH_STATUS';

export interface DnsFit {
  instances: CloudMapInstance[];
  /** Endpoint instances left out: their address family has no record type in the service. */
  skipped: { id: string; reason: string }[];
}

export interface ServiceRecordsView {
  dnsConfig?: ServiceDnsConfig | undefined;
  customHealth?: boolean | undefined;
}

/**
 * Adapts encoded instances to the service as Cloud Map has it. A service without records or
 * custom health gets the instances unchanged (HTTP namespaces: byte-identical to before).
 */
export function fitInstancesToService(
  instances: readonly CloudMapInstance[],
  service: ServiceRecordsView,
): DnsFit {
  const types = new Set((service.dnsConfig?.records ?? []).map((r) => r.type));
  const custom = service.customHealth === true;
  if (types.size === 0 && !custom) return { instances: [...instances], skipped: [] };
  const out: CloudMapInstance[] = [];
  const skipped: DnsFit['skipped'] = [];
  for (const instance of instances) {
    const a = instance.attributes;
    const isEndpoint = a[Attr.Record] === 'endpoint';
    if (isEndpoint) {
      // One address per endpoint instance: a service whose records need the other family
      // (A-only and an IPv6 endpoint, or A+AAAA) cannot take it.
      const missing =
        (types.has('A') && a[IPV4] === undefined) || (types.has('AAAA') && a[IPV6] === undefined);
      if (missing) {
        skipped.push({
          id: instance.id,
          reason: `the Cloud Map service has ${[...types].sort().join('+')} records and the endpoint address is ${a[IPV4] ?? a[IPV6]}`,
        });
        continue;
      }
      out.push({
        id: instance.id,
        attributes: custom
          ? { ...a, [INIT_HEALTH]: a[Attr.Ready] === 'true' ? 'HEALTHY' : 'UNHEALTHY' }
          : { ...a },
      });
      continue;
    }
    // The export record (and anything else without an address): placeholders that satisfy the
    // records, marked unhealthy so DNS never answers them while an endpoint is healthy.
    const extra: Record<string, string> = {};
    const needsAddress = types.has('SRV') && a[IPV4] === undefined && a[IPV6] === undefined;
    if (types.has('A') || (needsAddress && !types.has('AAAA'))) extra[IPV4] = PLACEHOLDER_IPV4;
    if (types.has('AAAA')) extra[IPV6] = PLACEHOLDER_IPV6;
    if (types.has('SRV')) extra[PORT] = PLACEHOLDER_PORT;
    if (custom) extra[INIT_HEALTH] = 'UNHEALTHY';
    out.push({ id: instance.id, attributes: { ...a, ...extra } });
  }
  return { instances: out, skipped };
}
