import type { ClusterExport, Endpoint, ServiceProperties } from '../../src/index.js';

/** Builders for planner tests: a readable default export, overridden per case. */
export function props(over: Partial<ServiceProperties> = {}): ServiceProperties {
  return {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    exportedLabels: {},
    exportedAnnotations: {},
    exportCreatedAtMs: 1_000,
    ...over,
  };
}

export function endpoint(address: string, over: Partial<Endpoint> = {}): Endpoint {
  return {
    address,
    addressType: address.includes(':') ? 'IPv6' : 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    conditions: { ready: true, serving: true, terminating: false },
    ...over,
  };
}

export function clusterExport(
  clusterId: string,
  over: Partial<ServiceProperties> = {},
  endpoints: Endpoint[] = [],
  extra: Partial<ClusterExport> = {},
): ClusterExport {
  return {
    namespace: 'shop',
    name: 'cart',
    cluster: { clusterId, clustersetId: 'set-1' },
    properties: props(over),
    endpoints,
    hasExportRecord: true,
    ...extra,
  };
}

/** n IPv4 endpoints 10.<cluster octet>.x.y */
export function endpoints(n: number, octet = 1, start = 0): Endpoint[] {
  return Array.from({ length: n }, (_, i) =>
    endpoint(
      `10.${String(octet)}.${String(Math.floor((start + i) / 250))}.${String(((start + i) % 250) + 1)}`,
    ),
  );
}

/** Deep-freezes a value so a planner that mutates its input throws in the test. */
export function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}
