import { describe, expect, it } from 'vitest';
import {
  items,
  parseClusterProperty,
  parseCrd,
  parseDeployment,
  parseImportedSlice,
  parseLease,
  parsePod,
  parseServiceAccount,
  parseServiceExport,
  parseServiceImport,
} from '../src/kube/parse.js';

describe('parse', () => {
  it('reads a ServiceExport with its conditions, defaulting odd statuses to Unknown', () => {
    const se = parseServiceExport({
      metadata: { namespace: 'demo', name: 'hello', creationTimestamp: '2026-11-29T17:00:00Z' },
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'True',
            reason: 'Valid',
            message: 'ok',
            lastTransitionTime: 't',
          },
          { type: 'Ready', status: 'weird', reason: 'Pending' },
        ],
      },
    });
    expect(se).toEqual({
      namespace: 'demo',
      name: 'hello',
      createdAt: '2026-11-29T17:00:00Z',
      conditions: [
        { type: 'Valid', status: 'True', reason: 'Valid', message: 'ok', lastTransitionTime: 't' },
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'Pending',
          message: '',
          lastTransitionTime: '',
        },
      ],
    });
  });

  it('reads a ServiceExport without status', () => {
    expect(parseServiceExport({ metadata: { namespace: 'a', name: 'b' } }).conditions).toEqual([]);
  });

  it('reads a ServiceImport with IPs, ports and clusters', () => {
    expect(
      parseServiceImport({
        metadata: { namespace: 'demo', name: 'hello' },
        spec: {
          type: 'ClusterSetIP',
          ips: ['10.0.0.9'],
          ports: [{ port: 80 }, { name: 'dns', protocol: 'UDP', port: 53 }],
        },
        status: { clusters: [{ cluster: 'c1' }, { cluster: 'c2' }] },
      }),
    ).toEqual({
      namespace: 'demo',
      name: 'hello',
      type: 'ClusterSetIP',
      ips: ['10.0.0.9'],
      ports: [
        { name: '', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
      clusters: ['c1', 'c2'],
      conditions: [],
    });
  });

  it('counts slice addresses, a nil ready condition counting as ready', () => {
    const s = parseImportedSlice({
      metadata: {
        namespace: 'demo',
        name: 's1',
        labels: {
          'multicluster.kubernetes.io/service-name': 'hello',
          'multicluster.kubernetes.io/source-cluster': 'c2',
        },
      },
      endpoints: [
        { addresses: ['10.1.0.1'], conditions: { ready: true } },
        { addresses: ['10.1.0.2'], conditions: { ready: false } },
        { addresses: ['10.1.0.3'] },
      ],
    });
    expect(s).toEqual({
      namespace: 'demo',
      name: 's1',
      serviceName: 'hello',
      sourceCluster: 'c2',
      addresses: ['10.1.0.1', '10.1.0.2', '10.1.0.3'],
      readyAddresses: ['10.1.0.1', '10.1.0.3'],
    });
  });

  it('reads CRD versions and the Established condition', () => {
    expect(
      parseCrd({
        metadata: { name: 'x.y' },
        spec: {
          versions: [
            { name: 'v1alpha1', served: false, storage: false },
            { name: 'v1beta1', served: true, storage: true },
          ],
        },
        status: { conditions: [{ type: 'Established', status: 'True' }] },
      }),
    ).toEqual({
      name: 'x.y',
      versions: [
        { name: 'v1alpha1', served: false, storage: false },
        { name: 'v1beta1', served: true, storage: true },
      ],
      established: true,
    });
    expect(parseCrd({ metadata: { name: 'x.y' } }).established).toBe(false);
  });

  it('reads ClusterProperties and Deployments', () => {
    expect(
      items({ items: [{ metadata: { name: 'clusterset.k8s.io' }, spec: { value: 'demo' } }] }).map(
        parseClusterProperty,
      ),
    ).toEqual([{ name: 'clusterset.k8s.io', value: 'demo' }]);
    expect(
      parseDeployment({
        metadata: { namespace: 'mcs', name: 'export', labels: { app: 'x' } },
        spec: { template: { spec: { containers: [{ image: 'img:1' }] } } },
        status: { readyReplicas: 1, availableReplicas: 1 },
      }),
    ).toEqual({
      namespace: 'mcs',
      name: 'export',
      labels: { app: 'x' },
      images: ['img:1'],
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      serviceAccountName: '',
      env: {},
      selector: {},
    });
  });

  it('keeps only literal env values of a Deployment, never a valueFrom reference', () => {
    const d = parseDeployment({
      metadata: { namespace: 'mcs', name: 'export' },
      spec: {
        selector: { matchLabels: { 'app.kubernetes.io/component': 'export-agent' } },
        template: {
          spec: {
            serviceAccountName: 'agent',
            containers: [
              {
                env: [
                  { name: 'MCS_LEASE_NAME', value: 'l1' },
                  { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                ],
              },
            ],
          },
        },
      },
    });
    expect(d).toMatchObject({
      serviceAccountName: 'agent',
      env: { MCS_LEASE_NAME: 'l1' },
      selector: { 'app.kubernetes.io/component': 'export-agent' },
    });
  });

  it('reads a Pod, a Lease and a ServiceAccount', () => {
    expect(
      parsePod({
        metadata: { namespace: 'mcs', name: 'p1', labels: { a: 'b' } },
        spec: {
          containers: [
            {
              name: 'agent',
              env: [{ name: 'AWS_CONTAINER_CREDENTIALS_FULL_URI', value: 'http://x' }],
              ports: [{ name: 'health', containerPort: 8081 }],
            },
          ],
        },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      }),
    ).toEqual({
      namespace: 'mcs',
      name: 'p1',
      labels: { a: 'b' },
      ready: true,
      phase: 'Running',
      envNames: ['AWS_CONTAINER_CREDENTIALS_FULL_URI'],
      containers: ['agent'],
      metricsPort: 8081,
    });
    expect(
      parseLease({
        metadata: { namespace: 'mcs', name: 'l' },
        spec: { holderIdentity: 'p1', renewTime: new Date(0), leaseDurationSeconds: 15 },
      }),
    ).toEqual({
      namespace: 'mcs',
      name: 'l',
      holderIdentity: 'p1',
      renewTime: '1970-01-01T00:00:00.000Z',
      leaseDurationSeconds: 15,
    });
    expect(
      parseServiceAccount({
        metadata: {
          namespace: 'mcs',
          name: 'sa',
          annotations: { 'eks.amazonaws.com/role-arn': 'r' },
        },
      }).annotations,
    ).toEqual({ 'eks.amazonaws.com/role-arn': 'r' });
  });

  it('turns Date timestamps of typed client objects into ISO strings', () => {
    const se = parseServiceExport({ metadata: { name: 'a', creationTimestamp: new Date(0) } });
    expect(se.createdAt).toBe('1970-01-01T00:00:00.000Z');
  });
});
