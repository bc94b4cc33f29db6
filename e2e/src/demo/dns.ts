/**
 * The demo's DNS check: the exported service resolved by name through the emulator's DNS
 * server, as a client in the VPC of the private DNS namespace would (docs/dns-namespaces.md).
 */
import { Resolver } from 'node:dns/promises';
import type { ServiceRecordsView } from './records.js';

export interface DnsAnswer {
  /** `host:port` of the DNS server asked. */
  server: string;
  name: string;
  /** A records, sorted. */
  a: string[];
  /** AAAA records, sorted (an IPv6 export's DNS service has AAAA instead of A). */
  aaaa: string[];
  /** SRV records as `target:port`, sorted. */
  srv: string[];
}

const orEmpty = async <T>(p: Promise<T[]>): Promise<T[]> =>
  p.catch((error: { code?: string }) => {
    // No endpoint instance (yet): NXDOMAIN or no data of that type.
    if (error.code === 'ENOTFOUND' || error.code === 'ENODATA') return [];
    throw error;
  });

export async function resolveService(server: string, name: string): Promise<DnsAnswer> {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  resolver.setServers([server]);
  const [a, aaaa, srv] = await Promise.all([
    orEmpty(resolver.resolve4(name)),
    orEmpty(resolver.resolve6(name)),
    orEmpty(resolver.resolveSrv(name)),
  ]);
  return {
    server,
    name,
    a: [...a].sort(),
    aaaa: [...aaaa].sort(),
    srv: srv.map((r) => `${r.name}:${r.port}`).sort(),
  };
}

/**
 * What the DNS answer still lacks against the Cloud Map records, in words: A (AAAA) must list
 * every IPv4 (IPv6) endpoint address of every cluster, SRV one record per endpoint instance (address, port).
 * Route 53 multivalue answers carry at most 8 records: the demo's 4 pods fit.
 */
export function dnsGaps(answer: DnsAnswer, records: ServiceRecordsView): string[] {
  const endpoints = records.clusters.flatMap((c) => c.endpoints);
  const addresses = [...new Set(endpoints.map((e) => e.slice(0, e.lastIndexOf(':'))))].sort();
  const gaps: string[] = [];
  // A for the IPv4 endpoints, AAAA for the IPv6 ones (make demo IP_FAMILY=ipv6).
  for (const [type, got, want] of [
    ['A', answer.a, addresses.filter((x) => !x.includes(':'))],
    ['AAAA', answer.aaaa, addresses.filter((x) => x.includes(':'))],
  ] as const) {
    if (JSON.stringify(got) !== JSON.stringify(want))
      gaps.push(`DNS ${type} ${answer.name} is [${got.join(', ')}], want [${want.join(', ')}]`);
  }
  const srvPorts = answer.srv.map((s) => s.slice(s.lastIndexOf(':') + 1)).sort();
  const wantPorts = endpoints.map((e) => e.slice(e.lastIndexOf(':') + 1)).sort();
  if (JSON.stringify(srvPorts) !== JSON.stringify(wantPorts))
    gaps.push(
      `DNS SRV ${answer.name} has ${answer.srv.length} records, want ${endpoints.length} (ports ${wantPorts.join(', ')})`,
    );
  return gaps;
}
