import type { ClusterExport } from '../../src/index.js';

const cluster = { clusterId: 'cluster-a', clustersetId: 'clusterset-1' };

/** Inputs of the golden tests: each encodes to golden/<name>.json and decodes back. */
export const fixtures: Record<string, ClusterExport> = {
  'clusterset-ip-two-ports': {
    namespace: 'shop',
    name: 'cart',
    cluster,
    hasExportRecord: true,
    properties: {
      type: 'ClusterSetIP',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 'web', appProtocol: 'http' },
        { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: '9090' },
      ],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      internalTrafficPolicy: 'Cluster',
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: 1_767_225_600_000,
    },
    endpoints: [
      {
        address: '10.0.0.5',
        addressType: 'IPv4',
        ports: [
          { name: 'http', protocol: 'TCP', port: 8080 },
          { name: 'metrics', protocol: 'TCP', port: 9090 },
        ],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'cart-0',
        nodeName: 'node-1',
        zone: 'eu-west-1a',
      },
      {
        address: '10.0.1.7',
        addressType: 'IPv4',
        ports: [
          { name: 'http', protocol: 'TCP', port: 8080 },
          { name: 'metrics', protocol: 'TCP', port: 9090 },
        ],
        conditions: { ready: false, serving: true, terminating: true },
        nodeName: 'node-2',
      },
    ],
  },
  'headless-dual-stack-affinity-labels': {
    namespace: 'db',
    name: 'pg',
    cluster,
    hasExportRecord: true,
    properties: {
      type: 'Headless',
      ports: [{ name: '', protocol: 'TCP', port: 5432, targetPort: '5432' }],
      sessionAffinity: 'ClientIP',
      sessionAffinityTimeoutSeconds: 600,
      internalTrafficPolicy: 'Local',
      trafficDistribution: 'PreferClose',
      ipFamilies: ['IPv6', 'IPv4'],
      exportedLabels: { tier: 'data', 'app.kubernetes.io/name': 'pg' },
      exportedAnnotations: { description: 'Postgres – primary  (café) "quoted"\ttab' },
      exportCreatedAtMs: 1_767_225_601_234,
    },
    endpoints: [
      {
        address: '10.0.0.9',
        addressType: 'IPv4',
        ports: [{ name: '', protocol: 'TCP', port: 5432 }],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'pg-0',
      },
      {
        address: 'fd00:10::9',
        addressType: 'IPv6',
        ports: [{ name: '', protocol: 'TCP', port: 5432 }],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'pg-0',
      },
    ],
  },
  'zero-endpoints-udp-sctp': {
    namespace: 'infra',
    name: 'dns',
    cluster,
    hasExportRecord: true,
    properties: {
      type: 'ClusterSetIP',
      ports: [
        { name: 'dns', protocol: 'UDP', port: 53, targetPort: '53' },
        { name: 'sig', protocol: 'SCTP', port: 3868, targetPort: '3868' },
      ],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: 0,
    },
    endpoints: [],
  },
};
