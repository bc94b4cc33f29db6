import { describe, expect, it } from 'vitest';
import { decodeServiceInstances, type CloudMapInstance } from '../../src/index.js';
import { awsControllerInstance } from './aws-controller-instance.js';

describe('decoding the AWS Go controller records', () => {
  it('infers the export from endpoint-only records', () => {
    const instances: CloudMapInstance[] = [
      awsControllerInstance('10.0.0.5'),
      awsControllerInstance('10.0.0.6', {
        READY: 'false',
        SERVICE_EXPORT_CREATION_TIMESTAMP: '1690000000000',
      }),
    ];
    const { exports, rejected } = decodeServiceInstances('shop', 'cart', instances);
    expect(rejected).toEqual([]);
    expect(exports).toEqual([
      {
        namespace: 'shop',
        name: 'cart',
        cluster: { clusterId: 'legacy', clustersetId: 'clusterset-1' },
        hasExportRecord: false,
        properties: {
          type: 'ClusterSetIP',
          ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: '8080' }],
          sessionAffinity: 'None',
          ipFamilies: ['IPv4'],
          exportedLabels: {},
          exportedAnnotations: {},
          exportCreatedAtMs: 1_690_000_000_000,
        },
        endpoints: [
          {
            address: '10.0.0.5',
            addressType: 'IPv4',
            ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
            conditions: { ready: true, serving: true, terminating: false },
            nodeName: 'ip-10-0-0-1',
          },
          {
            address: '10.0.0.6',
            addressType: 'IPv4',
            ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
            conditions: { ready: false, serving: false, terminating: false },
            nodeName: 'ip-10-0-0-1',
          },
        ],
      },
    ]);
  });

  it('reads IPv6 records and Go ParseBool spellings', () => {
    const { exports } = decodeServiceInstances('ns', 'svc', [
      awsControllerInstance('fd00::5', { READY: 'T' }),
    ]);
    expect(exports[0]?.endpoints[0]).toMatchObject({
      address: 'fd00::5',
      addressType: 'IPv6',
      conditions: { ready: true },
    });
    expect(exports[0]?.properties.ipFamilies).toEqual(['IPv6']);
  });

  it.each<[string, Record<string, string>, string]>([
    ['missing READY', { READY: undefined as unknown as string }, 'missing READY'],
    ['bad port', { AWS_INSTANCE_PORT: '70000' }, 'AWS_INSTANCE_PORT is out of range: 70000'],
    [
      'bad address',
      { AWS_INSTANCE_IPV4: '10.0.0.999' },
      'AWS_INSTANCE_IPV4 is not IPv4: 10.0.0.999',
    ],
    ['bad protocol', { ENDPOINT_PROTOCOL: 'ICMP' }, 'ENDPOINT_PROTOCOL is not a protocol: ICMP'],
    [
      'bad type',
      { SERVICE_TYPE: 'LoadBalancer' },
      'SERVICE_TYPE is not ClusterSetIP or Headless: LoadBalancer',
    ],
    ['bad bool', { READY: 'yes' }, 'READY is not a boolean: yes'],
    ['empty cluster', { CLUSTER_ID: '' }, 'empty CLUSTER_ID'],
    ['other clusterset', { CLUSTERSET_ID: 'other' }, 'belongs to clusterset other'],
    ['newer schema', { MCS_SCHEMA_VERSION: '2' }, 'unsupported schema version 2'],
    ['unknown record', { MCS_RECORD: 'weird' }, 'unknown MCS_RECORD: weird'],
  ])('rejects an instance with %s, keeps the others', (_, change, reason) => {
    const bad = awsControllerInstance('10.0.0.7', change);
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete bad.attributes[k];
    const { exports, rejected } = decodeServiceInstances(
      'ns',
      'svc',
      [awsControllerInstance('10.0.0.5'), bad],
      { clustersetId: 'clusterset-1' },
    );
    expect(rejected).toEqual([{ instanceId: bad.id, reason }]);
    expect(exports[0]?.endpoints.map((e) => e.address)).toEqual(['10.0.0.5']);
  });
});
