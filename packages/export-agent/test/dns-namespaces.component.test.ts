// DNS namespaces (ADR 0010) over the fake Cloud Map: which services get DnsConfig, and what the
// instances carry so Route 53 accepts them and answers only ready endpoints.
import { afterEach, describe, expect, it } from 'vitest';
import {
  Attr,
  decodeServiceInstances,
  encodeClusterExport,
  HEARTBEAT_SERVICE_NAME,
} from '@cloudmap-mcs/core';
import type { FakeCloudMap } from '@cloudmap-mcs/core/testing';
import { fitInstancesToService } from '../src/dns-attributes.js';
import {
  clusterA,
  createFakeCloudMap,
  FakeK8s,
  startAgent,
  type Agent,
  converged,
} from './harness.js';

// The placeholder addresses Route 53 gets for records with no address of ours (ADR 0010):
// TEST-NET-1 and the IPv6 discard prefix, never routable.
const PLACEHOLDER_IPV4 = '192.0.2.1';
const PLACEHOLDER_IPV6 = '100::1';
import { service, serviceExport, slice } from './fake-k8s.js';

const KEY = 'shop/cart';
const DNS = { ttl: 15 };
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

function setup(dns: { ttl: number; namespaceVpc?: string } | undefined = DNS) {
  const fake = createFakeCloudMap();
  const k8s = new FakeK8s(clusterA);
  const agent = startAgent(k8s, fake, dns === undefined ? {} : { dns });
  agents.push(agent);
  return { fake, k8s, agent };
}

function exportCart(k8s: FakeK8s, eps: { ip: string; ready?: boolean }[], family = 'IPv4') {
  k8s.apply('service', service('shop', 'cart', { ipFamilies: [family] }));
  k8s.apply('slice', slice('shop', 'cart', 'cart-abc', eps, undefined, family));
  k8s.apply('export', serviceExport('shop', 'cart'));
}

const byRecord = (fake: FakeCloudMap, kind: string) =>
  fake.instancesOf('shop', 'cart').filter((i) => i.attributes[Attr.Record] === kind);
const health = (fake: FakeCloudMap) =>
  byRecord(fake, 'endpoint')
    .map((i) => `${i.attributes['AWS_INSTANCE_IPV4']}:${i.attributes['AWS_INIT_HEALTH_STATUS']}`)
    .sort();

describe('export agent with --dns-records', () => {
  it('creates the service in a DNS_PRIVATE namespace with A+SRV, MULTIVALUE and custom health', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    exportCart(k8s, [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', ready: false }]);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));

    const svc = fake.serviceByName('shop', 'cart');
    expect(svc?.dnsConfig).toEqual({
      routingPolicy: 'MULTIVALUE',
      records: [
        { type: 'A', ttl: 15 },
        { type: 'SRV', ttl: 15 },
      ],
    });
    expect(svc?.customHealth).toBe(true);
    // Ready endpoints are healthy, the others not: DNS answers the ready ones.
    expect(health(fake)).toEqual(['10.0.0.1:HEALTHY', '10.0.0.2:UNHEALTHY']);
    // The export record satisfies A and SRV with unreachable placeholders and never answers.
    const [record] = byRecord(fake, 'export');
    expect(record?.attributes).toMatchObject({
      AWS_INSTANCE_IPV4: PLACEHOLDER_IPV4,
      AWS_INSTANCE_PORT: '9',
      AWS_INIT_HEALTH_STATUS: 'UNHEALTHY',
    });
    // The heartbeat service has no address to publish: no DnsConfig.
    expect(fake.serviceByName('shop', HEARTBEAT_SERVICE_NAME)?.dnsConfig).toBeUndefined();
    // Readers see exactly what they saw without DNS records.
    const decoded = decodeServiceInstances('shop', 'cart', fake.instancesOf('shop', 'cart'), {
      clustersetId: clusterA.clustersetId,
    });
    expect(decoded.rejected).toEqual([]);
    expect(decoded.exports[0]?.endpoints.map((e) => e.address)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(decoded.exports[0]?.properties.ipFamilies).toEqual(['IPv4']);
  });

  it('follows readiness: a flip re-registers the endpoint with its new health', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    exportCart(k8s, [{ ip: '10.0.0.1' }]);
    await converged(() => expect(health(fake)).toEqual(['10.0.0.1:HEALTHY']));
    k8s.apply('slice', slice('shop', 'cart', 'cart-abc', [{ ip: '10.0.0.1', ready: false }]));
    await converged(() => expect(health(fake)).toEqual(['10.0.0.1:UNHEALTHY']));
  });

  it('an IPv6 Service gets AAAA+SRV', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    exportCart(k8s, [{ ip: 'fd00::5' }], 'IPv6');
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(fake.serviceByName('shop', 'cart')?.dnsConfig?.records.map((r) => r.type)).toEqual([
      'AAAA',
      'SRV',
    ]);
    expect(byRecord(fake, 'export')[0]?.attributes['AWS_INSTANCE_IPV6']).toBe(PLACEHOLDER_IPV6);
    expect(byRecord(fake, 'endpoint')[0]?.attributes['AWS_INSTANCE_IPV6']).toBe('fd00::5');
  });

  it('a dual-stack Service gets a service without records, and both families export', async () => {
    const { fake, k8s } = setup();
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    k8s.apply('service', service('shop', 'cart', { ipFamilies: ['IPv4', 'IPv6'] }));
    k8s.apply('slice', slice('shop', 'cart', 'cart-v4', [{ ip: '10.0.0.1' }], undefined, 'IPv4'));
    k8s.apply('slice', slice('shop', 'cart', 'cart-v6', [{ ip: 'fd00::1' }], undefined, 'IPv6'));
    k8s.apply('export', serviceExport('shop', 'cart'));
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(byRecord(fake, 'endpoint')).toHaveLength(2);
    expect(fake.serviceByName('shop', 'cart')?.dnsConfig).toBeUndefined();
    const decoded = decodeServiceInstances('shop', 'cart', fake.instancesOf('shop', 'cart'), {
      clustersetId: clusterA.clustersetId,
    });
    expect(decoded.exports[0]?.endpoints.map((e) => e.address)).toEqual(['10.0.0.1', 'fd00::1']);
    expect(decoded.exports[0]?.properties.ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it('creates an absent namespace as DNS_PRIVATE in the configured VPC', async () => {
    const { fake, k8s } = setup({ ttl: 30, namespaceVpc: 'vpc-0abc' });
    exportCart(k8s, [{ ip: '10.0.0.1' }]);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(fake.calls('createHttpNamespace')).toBe(0);
    expect(fake.calls('createPrivateDnsNamespace')).toBe(1);
    expect(fake.namespaceByName('shop')?.type).toBe('DNS_PRIVATE');
    expect(fake.serviceByName('shop', 'cart')?.dnsConfig?.records[0]).toEqual({
      type: 'A',
      ttl: 30,
    });
  });

  it('in an HTTP namespace nothing changes: no DnsConfig, the records as without the option', async () => {
    const { fake, k8s } = setup();
    exportCart(k8s, [{ ip: '10.0.0.1' }]);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(fake.namespaceByName('shop')?.type).toBe('HTTP');
    const svc = fake.serviceByName('shop', 'cart');
    expect(svc?.dnsConfig).toBeUndefined();
    expect(svc?.customHealth).toBeUndefined();
    for (const i of fake.instancesOf('shop', 'cart')) {
      expect(Object.keys(i.attributes)).not.toContain('AWS_INIT_HEALTH_STATUS');
    }
  });

  it('writes what an existing service needs even with the option off (another cluster made it)', async () => {
    const { fake, k8s } = setup(undefined);
    fake.seedNamespace('shop', 'DNS_PRIVATE');
    fake.seedService(
      'shop',
      'cart',
      {},
      {
        dnsConfig: { routingPolicy: 'MULTIVALUE', records: [{ type: 'SRV', ttl: 5 }] },
      },
    );
    exportCart(k8s, [{ ip: '10.0.0.1' }]);
    await converged(() => expect(k8s.condition(KEY, 'Ready')?.reason).toBe('Exported'));
    expect(byRecord(fake, 'export')[0]?.attributes).toMatchObject({
      AWS_INSTANCE_IPV4: PLACEHOLDER_IPV4,
      AWS_INSTANCE_PORT: '9',
    });
    // No custom health on that service: no health attribute.
    expect(byRecord(fake, 'endpoint')[0]?.attributes['AWS_INIT_HEALTH_STATUS']).toBeUndefined();
  });
});

describe('fitInstancesToService', () => {
  const encoded = encodeClusterExport({
    namespace: 'shop',
    name: 'cart',
    cluster: clusterA,
    hasExportRecord: true,
    properties: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4', 'IPv6'],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: 1,
    },
    endpoints: [
      {
        address: '10.0.0.1',
        addressType: 'IPv4',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        conditions: { ready: true, serving: true, terminating: false },
      },
      {
        address: 'fd00::1',
        addressType: 'IPv6',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        conditions: { ready: true, serving: true, terminating: false },
      },
    ],
  }).instances;

  it('leaves instances alone for a service without records or health check', () => {
    expect(fitInstancesToService(encoded, {})).toEqual({ instances: encoded, skipped: [] });
  });

  it('skips endpoints of a family the records cannot carry, with a reason', () => {
    const a = fitInstancesToService(encoded, {
      dnsConfig: { routingPolicy: 'MULTIVALUE', records: [{ type: 'A', ttl: 1 }] },
    });
    expect(a.skipped).toHaveLength(1);
    expect(a.skipped[0]?.reason).toContain('fd00::1');
    expect(a.instances.filter((i) => i.attributes[Attr.Record] === 'endpoint')).toHaveLength(1);
    // A+AAAA needs both addresses on every instance: no single-address endpoint fits.
    const both = fitInstancesToService(encoded, {
      dnsConfig: {
        routingPolicy: 'MULTIVALUE',
        records: [
          { type: 'A', ttl: 1 },
          { type: 'AAAA', ttl: 1 },
        ],
      },
    });
    expect(both.skipped).toHaveLength(2);
    expect(both.instances[0]?.attributes).toMatchObject({
      AWS_INSTANCE_IPV4: PLACEHOLDER_IPV4,
      AWS_INSTANCE_IPV6: PLACEHOLDER_IPV6,
    });
  });
});
