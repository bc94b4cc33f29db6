/** Builders for the CLI's unit tests. */
import type { ClusterExport, ClusterIdentity, Endpoint } from '@cloudmap-mcs/core';
import type {
  ImportedSliceInfo,
  ServiceExportInfo,
  ServiceImportInfo,
} from '../src/kube/objects.js';

export const c1: ClusterIdentity = { clusterId: 'c1', clustersetId: 'demo' };
export const c2: ClusterIdentity = { clusterId: 'c2', clustersetId: 'demo' };

export function endpoint(address: string, ready = true): Endpoint {
  return {
    address,
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    conditions: { ready, serving: ready, terminating: false },
  };
}

export function clusterExport(
  cluster: ClusterIdentity,
  addresses: string[],
  overrides: Partial<ClusterExport> = {},
): ClusterExport {
  return {
    namespace: 'demo',
    name: 'hello',
    cluster,
    properties: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: Date.parse('2026-11-29T17:00:00Z'),
    },
    endpoints: addresses.map((a) => endpoint(a)),
    hasExportRecord: true,
    ...overrides,
  };
}

export function serviceExport(
  name = 'hello',
  conditions: ServiceExportInfo['conditions'] = [
    { type: 'Valid', status: 'True', reason: 'Valid', message: '', lastTransitionTime: '' },
    { type: 'Ready', status: 'True', reason: 'Exported', message: '', lastTransitionTime: '' },
    {
      type: 'Conflict',
      status: 'False',
      reason: 'NoConflicts',
      message: '',
      lastTransitionTime: '',
    },
  ],
): ServiceExportInfo {
  return { namespace: 'demo', name, createdAt: '2026-11-29T17:00:00Z', conditions };
}

export function serviceImport(
  clusters: string[],
  overrides: Partial<ServiceImportInfo> = {},
): ServiceImportInfo {
  return {
    namespace: 'demo',
    name: 'hello',
    type: 'ClusterSetIP',
    ips: ['10.0.0.42'],
    ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    clusters,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '' },
    ],
    ...overrides,
  };
}

export function slice(
  sourceCluster: string,
  addresses: string[],
  ready = addresses,
): ImportedSliceInfo {
  return {
    namespace: 'demo',
    name: `hello-${sourceCluster}`,
    serviceName: 'hello',
    sourceCluster,
    addresses,
    readyAddresses: ready,
  };
}
