import { describe, expect, it } from 'vitest';
import {
  createAddressPolicy,
  decodeServiceInstances,
  encodeClusterExport,
  trustExport,
  type CloudMapInstance,
  type ClusterExport,
} from '../../src/index.js';
import { awsControllerInstance } from './aws-controller-instance.js';

// Issue 33. The AWS Go controller's IPv6 support is on its main branch only (after v0.3.1, no
// tagged release), and the Go module proxy does not serve that commit, so `make peer` cannot
// build it. These tests hold the record shape as docs/cloudmap-schema.md ("The AWS Go
// controller and IPv6") describes it, in both directions.

/**
 * An endpoint instance as the controller writes one for an IPv6 EndpointSlice address, by the
 * main-branch build that has IPv6 support.
 */
const awsV6 = (ip: string, extra: Record<string, string> = {}): CloudMapInstance =>
  awsControllerInstance(ip, {
    NODENAME: 'ip-fd00-0-0-1--11',
    K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s v0.3.2-0.20241023224212-57f4231cb57d',
    ...extra,
  });

/**
 * What the controller makes of one instance, by the rules in docs/cloudmap-schema.md: the
 * family is IPv4 when AWS_INSTANCE_IPV4 is present, else IPv6 when AWS_INSTANCE_IPV6 is; the
 * address text is taken as it is; the port, protocol, service-port, type, cluster, clusterset,
 * readiness and export-time attributes must all be present (ports as unsigned 16-bit decimal,
 * READY as a Go boolean, the time as a decimal integer), or the instance is skipped.
 */
function controllerReads(
  inst: CloudMapInstance,
): { ip: string; family: 'IPv4' | 'IPv6'; cluster: string; ready: boolean } | string {
  const a = inst.attributes;
  const v4 = a['AWS_INSTANCE_IPV4'];
  const v6 = a['AWS_INSTANCE_IPV6'];
  const required = [
    'ENDPOINT_PORT_NAME',
    'AWS_INSTANCE_PORT',
    'ENDPOINT_PROTOCOL',
    'SERVICE_TARGET_PORT',
    'SERVICE_PORT_NAME',
    'SERVICE_PORT',
    'SERVICE_PROTOCOL',
    'SERVICE_TYPE',
    'CLUSTER_ID',
    'CLUSTERSET_ID',
    'READY',
    'SERVICE_EXPORT_CREATION_TIMESTAMP',
  ];
  const missing = required.find((k) => a[k] === undefined);
  if (missing !== undefined) return `missing ${missing}`;
  for (const k of ['AWS_INSTANCE_PORT', 'SERVICE_PORT']) {
    if (!/^\d+$/.test(a[k] ?? '') || Number(a[k]) > 65535) return `bad ${k}`;
  }
  const ready = { '1': true, t: true, T: true, TRUE: true, true: true, True: true }[
    a['READY'] ?? ''
  ];
  const notReady = ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(a['READY'] ?? '');
  if (ready === undefined && !notReady) return 'bad READY';
  if (!/^-?\d+$/.test(a['SERVICE_EXPORT_CREATION_TIMESTAMP'] ?? '')) return 'bad timestamp';
  const family = v4 !== undefined ? 'IPv4' : 'IPv6';
  return { ip: v4 ?? v6 ?? '', family, cluster: a['CLUSTER_ID'] ?? '', ready: ready === true };
}

const ours: ClusterExport = {
  namespace: 'shop',
  name: 'cart',
  cluster: { clusterId: 'c1', clustersetId: 'clusterset-1' },
  hasExportRecord: true,
  properties: {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: '8080' }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv6', 'IPv4'],
    exportedLabels: {},
    exportedAnnotations: {},
    exportCreatedAtMs: 1_767_225_600_000,
  },
  endpoints: [
    {
      address: 'fd00:10:244:1::5',
      addressType: 'IPv6',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'n1',
    },
    {
      address: '10.244.1.5',
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      conditions: { ready: false, serving: true, terminating: true },
      nodeName: 'n1',
    },
  ],
};

describe('the AWS Go controller IPv6 records', () => {
  it('we import its IPv6 records, canonicalising the address text it copied verbatim', () => {
    const instances = [
      awsV6('fd00:10:244:1::5'),
      // Its own tests use this spelling: upper case, leading zeros, no '::'.
      awsV6('2001:0db8:0001:0000:0000:0ab9:C0A8:0102', { READY: 'F' }),
    ];
    const decoded = decodeServiceInstances('shop', 'cart', instances, {
      clustersetId: 'clusterset-1',
    });
    expect(decoded.rejected).toEqual([]);
    const [exp] = decoded.exports;
    expect(exp?.properties.ipFamilies).toEqual(['IPv6']);
    expect(exp?.hasExportRecord).toBe(false);
    const trusted = trustExport(
      { clustersetId: 'clusterset-1', addresses: createAddressPolicy([]) },
      exp as ClusterExport,
    );
    expect(trusted.refusals).toEqual([]);
    expect(trusted.value?.endpoints).toMatchObject([
      // sorted by address
      { address: '2001:db8:1::ab9:c0a8:102', addressType: 'IPv6', conditions: { ready: false } },
      { address: 'fd00:10:244:1::5', addressType: 'IPv6', conditions: { ready: true } },
    ]);
  });

  it('reads an instance carrying both address attributes as IPv4, as the controller does', () => {
    const both = awsV6('fd00::5', { AWS_INSTANCE_IPV4: '10.0.0.5' });
    expect(controllerReads(both)).toMatchObject({ ip: '10.0.0.5', family: 'IPv4' });
    const { exports, rejected } = decodeServiceInstances('shop', 'cart', [both]);
    expect(rejected).toEqual([]);
    expect(exports[0]?.endpoints[0]).toMatchObject({ address: '10.0.0.5', addressType: 'IPv4' });
  });

  it('refuses a hostile IPv6 address in its records with the reason', () => {
    const { exports } = decodeServiceInstances('shop', 'cart', [
      awsV6('fd00:10:244:1::5'),
      awsV6('FD00:EC2::254'),
      awsV6('64:ff9b::a9fe:a9fe'),
    ]);
    const trusted = trustExport(
      { clustersetId: 'clusterset-1', addresses: createAddressPolicy([]) },
      exports[0] as ClusterExport,
    );
    expect(trusted.value?.endpoints.map((e) => e.address)).toEqual(['fd00:10:244:1::5']);
    expect(trusted.refusals.map((r) => [r.reason, r.detail])).toEqual([
      ['refused-address', 'metadata'],
      ['refused-address', 'metadata'],
    ]);
  });

  it('our dual-stack export: every endpoint instance parses by its rules in its own family', () => {
    const { instances, problems } = encodeClusterExport(ours);
    expect(problems).toEqual([]);
    const endpoints = instances.filter((i) => i.attributes['MCS_RECORD'] === 'endpoint');
    expect(endpoints).toHaveLength(2);
    // Exactly one address attribute each, so the controller never falls back to IPv4.
    for (const inst of endpoints) {
      const has = ['AWS_INSTANCE_IPV4', 'AWS_INSTANCE_IPV6'].filter((k) => k in inst.attributes);
      expect(has).toHaveLength(1);
    }
    expect(endpoints.map(controllerReads)).toEqual(
      expect.arrayContaining([
        { ip: 'fd00:10:244:1::5', family: 'IPv6', cluster: 'c1', ready: true },
        { ip: '10.244.1.5', family: 'IPv4', cluster: 'c1', ready: false },
      ]),
    );
    // Our IPv6 instance ID spells the address as the controller's does ('.' and ':' → '_').
    const v6 = endpoints.find((i) => 'AWS_INSTANCE_IPV6' in i.attributes);
    expect(v6?.id).toMatch(/fd00_10_244_1__5/);
    // The export record is not an endpoint to it: it lacks the port attributes and is skipped.
    const record = instances.find((i) => i.attributes['MCS_RECORD'] === 'export');
    expect(controllerReads(record as CloudMapInstance)).toMatch(/^missing /);
  });
});
