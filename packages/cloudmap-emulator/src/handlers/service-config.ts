import { InvalidInput } from '../errors.js';
import type { DnsRecordConfig, NamespaceRecord, ServiceRecord } from '../model.js';
import { asObject, optInt, optString, reqArray, reqString, type Json } from '../validate.js';

type DnsConfig = NonNullable<ServiceRecord['dnsConfig']>;

export function readDnsConfig(input: Json | undefined): DnsConfig | undefined {
  if (!input) return undefined;
  const routing = optString(
    input,
    'RoutingPolicy',
    { oneOf: ['MULTIVALUE', 'WEIGHTED'] },
    'DnsConfig.RoutingPolicy',
  );
  const records = reqArray(input, 'DnsRecords', 'DnsConfig.DnsRecords').map(
    (raw, i): DnsRecordConfig => {
      const path = `DnsConfig.DnsRecords.${i + 1}.member`;
      const r = asObject(raw, path);
      const type = reqString(r, 'Type', { oneOf: ['SRV', 'A', 'AAAA', 'CNAME'] }, `${path}.Type`);
      const ttl = optInt(r, 'TTL', 0, 2147483647, `${path}.TTL`);
      if (ttl === undefined) reqString(r, 'TTL', {}, `${path}.TTL`);
      return { Type: type as DnsRecordConfig['Type'], TTL: ttl! };
    },
  );
  return { RoutingPolicy: routing ?? 'MULTIVALUE', DnsRecords: records };
}

export function readHealthCheck(input: Json | undefined): ServiceRecord['healthCheckConfig'] {
  if (!input) return undefined;
  const type = reqString(
    input,
    'Type',
    { oneOf: ['HTTP', 'HTTPS', 'TCP'] },
    'HealthCheckConfig.Type',
  );
  const path = optString(input, 'ResourcePath', { max: 255 }, 'HealthCheckConfig.ResourcePath');
  const threshold = optInt(input, 'FailureThreshold', 1, 10, 'HealthCheckConfig.FailureThreshold');
  if (type === 'TCP' && path !== undefined)
    throw new InvalidInput('ResourcePath is not allowed for TCP health checks');
  return {
    Type: type,
    ...(path !== undefined ? { ResourcePath: path } : type !== 'TCP' ? { ResourcePath: '/' } : {}),
    FailureThreshold: threshold ?? 1,
  };
}

export function readHealthCheckCustom(
  input: Json | undefined,
): ServiceRecord['healthCheckCustomConfig'] {
  if (!input) return undefined;
  // Deprecated: Cloud Map always uses 1 whatever is sent (API doc).
  optInt(input, 'FailureThreshold', 1, 10, 'HealthCheckCustomConfig.FailureThreshold');
  return { FailureThreshold: 1 };
}

/**
 * At most one A, one AAAA and one SRV record, in any combination, or a CNAME alone. The Cloud
 * Map DnsRecord page lists only A, AAAA, A+AAAA, SRV and CNAME, but the Route 53 auto naming
 * reference it grew from says "a maximum of one A, one AAAA, and one SRV record ... in any
 * combination", and ECS service discovery services are created with A+SRV (ADR 0010).
 */
function validCombination(types: string[]): boolean {
  if (types.length === 0 || new Set(types).size !== types.length) return false;
  return types.includes('CNAME') ? types.length === 1 : true;
}

export function checkServiceRules(
  ns: NamespaceRecord,
  s: {
    explicitType: string | undefined;
    dnsConfig: DnsConfig | undefined;
    healthCheckConfig: ServiceRecord['healthCheckConfig'];
    healthCheckCustomConfig: ServiceRecord['healthCheckCustomConfig'];
  },
): void {
  if (s.dnsConfig && (ns.type === 'HTTP' || s.explicitType === 'HTTP')) {
    throw new InvalidInput(
      'DnsConfig is not supported for services of type HTTP or in HTTP namespaces',
    );
  }
  if (s.dnsConfig) {
    const types = s.dnsConfig.DnsRecords.map((r) => r.Type).sort();
    if (!validCombination(types)) {
      throw new InvalidInput(
        `DNS record types ${types.join(', ') || '(none)'} are not a valid combination`,
      );
    }
    if (types.includes('CNAME') && s.dnsConfig.RoutingPolicy !== 'WEIGHTED') {
      throw new InvalidInput('CNAME records require the WEIGHTED routing policy');
    }
    if (types.includes('CNAME') && s.healthCheckConfig) {
      throw new InvalidInput(
        'A health check cannot be configured for a service with a CNAME record',
      );
    }
  }
  if (s.healthCheckConfig && s.healthCheckCustomConfig) {
    throw new InvalidInput(
      'HealthCheckConfig and HealthCheckCustomConfig cannot both be specified',
    );
  }
  if (s.healthCheckConfig && ns.type === 'DNS_PRIVATE') {
    throw new InvalidInput(
      'Route 53 health checks are supported only for public DNS and HTTP namespaces',
    );
  }
}
