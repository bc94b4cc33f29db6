import type { DnsConfig } from '@aws-sdk/client-servicediscovery';
import type { DnsRecordType, ServiceDnsConfig, ServiceSpec } from '../ports/cloudmap-port.js';

const RECORD_TYPES: ReadonlySet<string> = new Set<DnsRecordType>(['A', 'AAAA', 'SRV', 'CNAME']);

/** The SDK's DnsConfig in our terms; undefined when the service has no records. */
export function fromSdkDnsConfig(dns: DnsConfig | undefined): ServiceDnsConfig | undefined {
  const records = (dns?.DnsRecords ?? []).flatMap((r) =>
    r.Type !== undefined && RECORD_TYPES.has(r.Type)
      ? [{ type: r.Type as DnsRecordType, ttl: r.TTL ?? 0 }]
      : [],
  );
  if (records.length === 0) return undefined;
  return { routingPolicy: dns?.RoutingPolicy === 'WEIGHTED' ? 'WEIGHTED' : 'MULTIVALUE', records };
}

/** CreateService members for a ServiceSpec (nothing for an HTTP-only service). */
export function toSdkServiceSpec(spec: ServiceSpec | undefined): {
  DnsConfig?: DnsConfig;
  HealthCheckCustomConfig?: Record<string, never>;
} {
  return {
    ...(spec?.dnsConfig === undefined
      ? {}
      : {
          DnsConfig: {
            RoutingPolicy: spec.dnsConfig.routingPolicy,
            DnsRecords: spec.dnsConfig.records.map((r) => ({ Type: r.type, TTL: r.ttl })),
          },
        }),
    ...(spec?.customHealth === true ? { HealthCheckCustomConfig: {} } : {}),
  };
}
