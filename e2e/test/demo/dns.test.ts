import { describe, expect, it } from 'vitest';
import { dnsGaps, type DnsAnswer } from '../../src/demo/dns.js';
import type { ServiceRecordsView } from '../../src/demo/records.js';

const records: ServiceRecordsView = {
  instances: 6,
  clusters: [
    { cluster: 'c1', hasExportRecord: true, endpoints: ['10.1.0.2:8080', '10.1.0.3:8080'] },
    { cluster: 'c2', hasExportRecord: true, endpoints: ['10.2.0.2:8080'] },
  ],
  heartbeats: [],
};
const answer = (a: string[], srvPorts: number[], aaaa: string[] = []): DnsAnswer => ({
  server: '127.0.0.1:1',
  name: 'hello.demo',
  a,
  aaaa,
  srv: srvPorts.map((p, i) => `i${i}.hello.demo:${p}`),
});

describe('dnsGaps', () => {
  it('is empty when A lists every endpoint address and SRV every endpoint instance', () => {
    expect(
      dnsGaps(answer(['10.1.0.2', '10.1.0.3', '10.2.0.2'], [8080, 8080, 8080]), records),
    ).toEqual([]);
  });

  it('names a missing address and a short SRV answer', () => {
    const gaps = dnsGaps(answer(['10.1.0.2', '10.1.0.3'], [8080]), records);
    expect(gaps).toHaveLength(2);
    expect(gaps[0]).toContain('want [10.1.0.2, 10.1.0.3, 10.2.0.2]');
    expect(gaps[1]).toContain('has 1 records, want 3');
  });

  it('IPv6 endpoints are checked against AAAA (IP_FAMILY=ipv6)', () => {
    const v6: ServiceRecordsView = {
      ...records,
      clusters: [{ cluster: 'c1', hasExportRecord: true, endpoints: ['fd00:10:1::1:8080'] }],
    };
    expect(dnsGaps(answer([], [8080], ['fd00:10:1::1']), v6)).toEqual([]);
    expect(dnsGaps(answer([], [8080]), v6)).toEqual([
      'DNS AAAA hello.demo is [], want [fd00:10:1::1]',
    ]);
  });
});
