import { describe, expect, it } from 'vitest';
import { buildDesiredExport } from '../src/desired.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const cluster = { clusterId: 'a', clustersetId: 's' };
const se = serviceExport('ns', 'svc', '2026-01-01T00:00:00Z', {
  exportedLabels: { team: 'x' },
  exportedAnnotations: { note: 'y' },
});

describe('buildDesiredExport', () => {
  it.each([
    ['ClusterIP', { type: 'ClusterIP' }, 'ClusterSetIP'],
    ['NodePort', { type: 'NodePort' }, 'ClusterSetIP'],
    ['LoadBalancer', { type: 'LoadBalancer' }, 'ClusterSetIP'],
    ['headless', { type: 'ClusterIP', clusterIP: 'None' }, 'Headless'],
  ])('%s exports as %s', (_, spec, type) => {
    const d = buildDesiredExport(cluster, se, service('ns', 'svc', spec), []);
    expect(d.valid && d.export.properties.type).toBe(type);
  });

  it.each([
    ['no Service', undefined, 'NoService'],
    ['ExternalName', service('ns', 'svc', { type: 'ExternalName' }), 'InvalidServiceType'],
  ])('%s is invalid: %s', (_, svc, reason) => {
    expect(buildDesiredExport(cluster, se, svc, [])).toMatchObject({ valid: false, reason });
  });

  it('resolves named target ports from slice ports, several ports and protocols', () => {
    const svc = service('ns', 'svc', {
      ports: [
        { name: 'web', protocol: 'TCP', port: 80, targetPort: 'http' },
        { name: 'dns', protocol: 'UDP', port: 53, targetPort: 5353 },
        { name: 'sig', protocol: 'SCTP', port: 3868 },
      ],
    });
    const s = slice(
      'ns',
      'svc',
      's1',
      [{ ip: '10.0.0.1' }],
      [
        { name: 'web', protocol: 'TCP', port: 8080 },
        { name: 'dns', protocol: 'UDP', port: 5353 },
        { name: 'sig', protocol: 'SCTP', port: 3868 },
        { name: 'stray', protocol: 'TCP', port: 1 },
      ],
    );
    const d = buildDesiredExport(cluster, se, svc, [s]);
    if (!d.valid) throw new Error('invalid');
    expect(d.export.properties.ports).toEqual([
      { name: 'web', protocol: 'TCP', port: 80, targetPort: 'http' },
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: '5353' },
      { name: 'sig', protocol: 'SCTP', port: 3868, targetPort: '3868' },
    ]);
    expect(d.export.endpoints[0]?.ports).toEqual([
      { name: 'web', protocol: 'TCP', port: 8080 },
      { name: 'dns', protocol: 'UDP', port: 5353 },
      { name: 'sig', protocol: 'SCTP', port: 3868 },
    ]);
  });

  it('carries conditions, hostname, node, zone, dual-stack, affinity and exported metadata', () => {
    const svc = service('ns', 'svc', {
      ipFamilies: ['IPv6', 'IPv4'],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } },
      internalTrafficPolicy: 'Local',
      trafficDistribution: 'PreferClose',
    });
    const v4 = slice('ns', 'svc', 's4', [
      { ip: '10.0.0.1', ready: false, serving: true, terminating: true },
    ]);
    const v6 = slice('ns', 'svc', 's6', [{ ip: 'fd00::1' }], undefined, 'IPv6');
    v6.endpoints![0]!.hostname = 'pod-0';
    v6.endpoints![0]!.zone = 'z1';
    v6.endpoints![0]!.nodeName = 'n1';
    delete v6.endpoints![0]!.conditions;
    const fqdn = slice('ns', 'svc', 'sf', [{ ip: 'example.com' }], undefined, 'FQDN');
    const d = buildDesiredExport(cluster, se, svc, [v4, v6, fqdn]);
    if (!d.valid) throw new Error('invalid');
    expect(d.export.properties).toMatchObject({
      ipFamilies: ['IPv6', 'IPv4'],
      sessionAffinity: 'ClientIP',
      sessionAffinityTimeoutSeconds: 300,
      internalTrafficPolicy: 'Local',
      trafficDistribution: 'PreferClose',
      exportedLabels: { team: 'x' },
      exportedAnnotations: { note: 'y' },
      exportCreatedAtMs: Date.parse('2026-01-01T00:00:00Z'),
    });
    expect(d.export.endpoints).toEqual([
      {
        address: '10.0.0.1',
        addressType: 'IPv4',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        conditions: { ready: false, serving: true, terminating: true },
      },
      {
        address: 'fd00::1',
        addressType: 'IPv6',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        // nil conditions: ready and serving, not terminating (EndpointSlice API).
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'pod-0',
        nodeName: 'n1',
        zone: 'z1',
      },
    ]);
  });

  it('keeps an address listed by two slices once, preferring the ready copy', () => {
    const a = slice('ns', 'svc', 'a', [{ ip: '10.0.0.1', ready: false }]);
    const b = slice('ns', 'svc', 'b', [{ ip: '10.0.0.1', ready: true }]);
    const d = buildDesiredExport(cluster, se, service('ns', 'svc'), [a, b]);
    expect(d.valid && d.export.endpoints.map((e) => e.conditions.ready)).toEqual([true]);
  });
});
