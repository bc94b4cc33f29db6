import { describe, expect, it } from 'vitest';
import {
  Attr,
  decodeHeartbeats,
  decodeServiceInstances,
  encodeClusterExport,
  encodeHeartbeat,
  endpointInstanceId,
  exportInstanceId,
  heartbeatInstanceId,
  isOwnInstance,
  type ClusterExport,
} from '../../src/index.js';
import { fixtures } from './fixtures.js';

const base = fixtures['clusterset-ip-two-ports']!;
const cluster = base.cluster;
const withProps = (p: Partial<ClusterExport['properties']>): ClusterExport => ({
  ...base,
  properties: { ...base.properties, ...p },
});

describe('instance IDs', () => {
  it('differ between clusters that reuse an address', () => {
    const other = { ...cluster, clusterId: 'cluster-b' };
    expect(endpointInstanceId(cluster, 'TCP', '10.0.0.5', 80)).not.toBe(
      endpointInstanceId(other, 'TCP', '10.0.0.5', 80),
    );
    expect(exportInstanceId(cluster)).not.toBe(exportInstanceId(other));
  });

  it.each([
    ['10.0.0.5', 'TCP', 80],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'SCTP', 65535],
    ['0000:0000:0000:0000:0000:ffff:192.168.100.200', 'SCTP', 65535],
  ] as const)('fit 64 characters and the Cloud Map pattern for %s', (address, proto, port) => {
    const id = endpointInstanceId(cluster, proto, address, port);
    expect(id.length).toBeLessThanOrEqual(64);
    expect(id).toMatch(/^[0-9a-zA-Z_/:.@-]+$/);
    expect(heartbeatInstanceId(cluster)).toMatch(/^[0-9a-f]{12}-heartbeat$/);
  });
});

describe('limits', () => {
  it('splits long labels over several attributes and reads them back whole', () => {
    const labels = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`label-${i}.example.com/key`, `value-${i}`]),
    );
    const exp = withProps({ exportedLabels: labels });
    const { instances, problems } = encodeClusterExport(exp);
    expect(problems).toEqual([]);
    const record = instances[0]!.attributes;
    expect(record[Attr.ExportedLabels]!.length).toBe(1024);
    expect(record[`${Attr.ExportedLabels}.2`]).toBeDefined();
    const decoded = decodeServiceInstances('shop', 'cart', instances);
    expect(decoded.exports[0]!.properties.exportedLabels).toEqual(labels);
  });

  it('reports annotations beyond 5,000 characters instead of truncating them', () => {
    const exp = withProps({ exportedAnnotations: { big: 'x'.repeat(6000) } });
    const { problems } = encodeClusterExport(exp);
    expect(problems.map((p) => p.code)).toEqual(expect.arrayContaining(['AttributesTooLarge']));
  });

  it('reports more than 30 attributes', () => {
    const exp = withProps({ exportedAnnotations: { big: 'y'.repeat(20 * 1024) } });
    const codes = encodeClusterExport(exp).problems.map((p) => p.code);
    expect(codes).toContain('TooManyAttributes');
  });

  it('reports more than 1,000 instances for one service', () => {
    const endpoints = Array.from({ length: 501 }, (_, i) => ({
      ...base.endpoints[0]!,
      address: `10.1.${Math.floor(i / 250)}.${i % 250}`,
    }));
    const codes = encodeClusterExport({ ...base, endpoints }).problems.map((p) => p.code);
    expect(codes).toEqual(['TooManyInstances']);
  });

  it('reports an endpoint port that matches no Service port', () => {
    const ep = {
      ...base.endpoints[0]!,
      ports: [{ name: 'grpc', protocol: 'TCP' as const, port: 1 }],
    };
    const { problems } = encodeClusterExport({ ...base, endpoints: [ep] });
    expect(problems.map((p) => p.code)).toEqual(['UnmatchedEndpointPort']);
  });
});

describe('heartbeats and ownership', () => {
  it('round-trips a heartbeat', () => {
    const hb = { cluster, renewedAtMs: 1_767_225_600_123, periodSeconds: 30 };
    const instance = encodeHeartbeat(hb);
    expect(decodeHeartbeats([instance], { clustersetId: 'clusterset-1' })).toEqual({
      heartbeats: [hb],
      rejected: [],
    });
    expect(decodeHeartbeats([instance], { clustersetId: 'other' }).rejected).toHaveLength(1);
  });

  it('owns only instances with its cluster and clusterset ids', () => {
    const [record] = encodeClusterExport(base).instances;
    expect(isOwnInstance(record!, cluster)).toBe(true);
    expect(isOwnInstance(record!, { ...cluster, clusterId: 'cluster-b' })).toBe(false);
    expect(isOwnInstance(record!, { ...cluster, clustersetId: 'x' })).toBe(false);
  });

  it('decodes several clusters of one service, each with its own records', () => {
    const b = { ...base, cluster: { ...cluster, clusterId: 'cluster-b' }, endpoints: [] };
    const instances = [...encodeClusterExport(b).instances, ...encodeClusterExport(base).instances];
    const { exports } = decodeServiceInstances('shop', 'cart', instances);
    expect(exports.map((e) => [e.cluster.clusterId, e.endpoints.length])).toEqual([
      ['cluster-a', 2],
      ['cluster-b', 0],
    ]);
  });
});
