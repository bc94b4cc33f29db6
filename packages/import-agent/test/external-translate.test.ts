import {
  createAddressPolicy,
  createLocalAddresses,
  type CloudMapInstance,
} from '@cloudmap-mcs/core';
import { describe, expect, it } from 'vitest';
import {
  isProblem,
  selectionOf,
  sourceClusterId,
  type Selection,
} from '../src/external/selection.js';
import { translateInstances } from '../src/external/translate.js';
import type { ExternalObject } from '../src/external/types.js';

const trust = {
  clustersetId: 'set-1',
  localClusterId: 'c1',
  addresses: createAddressPolicy(['10.0.0.0/8'], createLocalAddresses()),
};
const obj = (spec: ExternalObject['spec'], name = 'payments'): ExternalObject => ({
  metadata: { name, namespace: 'shop', generation: 3 },
  ...(spec === undefined ? {} : { spec }),
});
const sel = (spec: Partial<NonNullable<ExternalObject['spec']>> = {}): Selection => {
  const s = selectionOf(obj({ cloudMap: { namespace: 'ecs', service: 'payments' }, ...spec }));
  if (isProblem(s)) throw new Error(s.message);
  return s;
};
const inst = (
  id: string,
  attributes: Record<string, string>,
  health?: CloudMapInstance['health'],
): CloudMapInstance => ({ id, attributes, ...(health === undefined ? {} : { health }) });
const task = (
  id: string,
  ip: string,
  health: CloudMapInstance['health'] = 'HEALTHY',
  port = '8080',
) => inst(id, { AWS_INSTANCE_IPV4: ip, AWS_INSTANCE_PORT: port }, health);

describe('selectionOf', () => {
  it.each([
    ['no spec', undefined, 'InvalidSpec'],
    ['no service', { cloudMap: { namespace: 'ecs' } }, 'InvalidSpec'],
    [
      'the heartbeat service',
      { cloudMap: { namespace: 'ecs', service: '_mcs-heartbeat' } },
      'ExportedByKubernetes',
    ],
    [
      'a bad type',
      { cloudMap: { namespace: 'ecs', service: 's' }, type: 'LoadBalancer' },
      'InvalidSpec',
    ],
    [
      'two unnamed ports',
      { cloudMap: { namespace: 'ecs', service: 's' }, ports: [{ port: 1 }, { port: 2 }] },
      'InvalidSpec',
    ],
    [
      'a port out of range',
      { cloudMap: { namespace: 'ecs', service: 's' }, ports: [{ port: 70000 }] },
      'InvalidSpec',
    ],
    [
      'a duplicated port name',
      {
        cloudMap: { namespace: 'ecs', service: 's' },
        ports: [
          { name: 'a', port: 1 },
          { name: 'a', port: 2 },
        ],
      },
      'InvalidSpec',
    ],
  ])('refuses %s', (_what, spec, reason) => {
    const s = selectionOf(obj(spec as ExternalObject['spec']));
    expect(isProblem(s) && s.reason).toBe(reason);
  });

  it('refuses a name that cannot be a Service name', () => {
    const s = selectionOf(obj({ cloudMap: { namespace: 'ecs', service: 's' } }, 'Bad_Name'));
    expect(isProblem(s) && s.reason).toBe('InvalidSpec');
  });

  it('keeps what the user asked for', () => {
    expect(
      sel({ cloudMap: { namespace: 'ecs', service: 'payments', queryParameters: { v: 'red' } } }),
    ).toEqual({
      key: 'shop/payments',
      namespace: 'shop',
      name: 'payments',
      generation: 3,
      cloudMapNamespace: 'ecs',
      cloudMapService: 'payments',
      queryParameters: { v: 'red' },
      type: 'ClusterSetIP',
      ports: [],
    });
  });
});

describe('sourceClusterId', () => {
  it.each([
    ['ecs', 'payments', 'cloudmap.ecs.payments'],
    ['Corp.Internal', 'payments', /^cloudmap\.[0-9a-z]{16}$/],
    ['ecs', 'a'.repeat(60), /^cloudmap\.[0-9a-z]{16}$/],
  ])('%s/%s → %s', (ns, svc, want) => {
    const id = sourceClusterId(ns, svc);
    if (typeof want === 'string') expect(id).toBe(want);
    else expect(id).toMatch(want);
  });
});

describe('translateInstances', () => {
  it('healthy instances are ready, unhealthy not ready, UNKNOWN (no health check) ready', () => {
    const read = translateInstances(
      sel(),
      [task('a', '10.0.0.1'), task('b', '10.0.0.2', 'UNHEALTHY'), task('c', '10.0.0.3', 'UNKNOWN')],
      trust,
    );
    expect(read.problem).toBeUndefined();
    expect(read.counts).toEqual({ healthy: 2, unhealthy: 1, refused: 0 });
    expect(
      read.export?.endpoints.map((e) => [e.address, e.conditions.ready, e.conditions.serving]),
    ).toEqual([
      ['10.0.0.1', true, true],
      ['10.0.0.2', false, false],
      ['10.0.0.3', true, true],
    ]);
    expect(read.export?.cluster).toEqual({
      clusterId: 'cloudmap.ecs.payments',
      clustersetId: 'set-1',
    });
    expect(read.export?.properties.ports).toEqual([{ name: '', protocol: 'TCP', port: 8080 }]);
    expect(read.export?.properties.exportedAnnotations).toEqual({
      'multicluster.cloudmap-mcs.io/cloud-map-service': 'ecs/payments',
    });
  });

  it('refuses hostile and unusable instances one by one and keeps the rest', () => {
    const read = translateInstances(
      sel(),
      [
        task('ok', '10.0.0.1'),
        task('imds', '169.254.169.254'),
        task('loop', '127.0.0.1'),
        task('outside', '192.168.1.1'),
        task('badport', '10.0.0.5', 'HEALTHY', '99999'),
        inst('noip', { AWS_INSTANCE_PORT: '80' }),
        inst('noport', { AWS_INSTANCE_IPV4: '10.0.0.6' }),
        inst('x'.repeat(100), { AWS_INSTANCE_IPV4: '10.0.0.7', AWS_INSTANCE_PORT: '80' }),
      ],
      trust,
    );
    expect(read.export?.endpoints.map((e) => e.address)).toEqual(['10.0.0.1']);
    expect(read.counts).toEqual({ healthy: 1, unhealthy: 0, refused: 7 });
    expect(new Set(read.refusals.map((r) => r.reason))).toEqual(
      new Set(['refused-address', 'invalid-port', 'invalid-instance']),
    );
  });

  it('a refused instance does not choose the Service port', () => {
    const read = translateInstances(
      sel(),
      [task('ok', '10.0.0.1'), task('imds', '169.254.169.254', 'HEALTHY', '80')],
      trust,
    );
    expect(read.export?.properties.ports).toEqual([{ name: '', protocol: 'TCP', port: 8080 }]);
  });

  it('refuses a service written by an MCS export agent, whole', () => {
    const read = translateInstances(
      sel(),
      [
        task('a', '10.0.0.1'),
        inst('b', { AWS_INSTANCE_IPV4: '10.0.0.2', CLUSTER_ID: 'c2', CLUSTERSET_ID: 'set-1' }),
      ],
      trust,
    );
    expect(read.export).toBeUndefined();
    expect(read.problem?.reason).toBe('ExportedByKubernetes');
  });

  it('declared ports: one takes the instance port, several are used as declared', () => {
    const one = translateInstances(
      sel({ ports: [{ name: 'http', port: 80 }] }),
      [task('a', '10.0.0.1')],
      trust,
    );
    expect(one.export?.properties.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80 }]);
    expect(one.export?.endpoints[0]?.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 8080 },
    ]);
    const two = translateInstances(
      sel({
        ports: [
          { name: 'http', port: 80 },
          { name: 'grpc', port: 9090 },
        ],
      }),
      [inst('a', { AWS_INSTANCE_IPV4: '10.0.0.1' })],
      trust,
    );
    expect(two.export?.endpoints[0]?.ports.map((p) => p.port)).toEqual([80, 9090]);
  });

  it('no port anywhere is a NoPorts problem, not an empty import', () => {
    const read = translateInstances(sel(), [inst('a', { AWS_INSTANCE_IPV4: '10.0.0.1' })], trust);
    expect(read.problem?.reason).toBe('NoPorts');
    expect(translateInstances(sel(), [], trust).problem?.reason).toBe('NoPorts');
  });

  it('scaled to zero: the previous ports stay, with no endpoints', () => {
    const ports = [{ name: '', protocol: 'TCP' as const, port: 8080 }];
    const read = translateInstances(sel(), [], trust, ports);
    expect(read.problem).toBeUndefined();
    expect(read.export?.properties.ports).toEqual(ports);
    expect(read.export?.endpoints).toEqual([]);
  });

  it('an IPv6 instance gives an IPv6 endpoint; a dual-stack one both', () => {
    const read = translateInstances(
      sel(),
      [
        inst('a', { AWS_INSTANCE_IPV6: 'fd00::1', AWS_INSTANCE_PORT: '80' }),
        inst('b', {
          AWS_INSTANCE_IPV4: '10.0.0.2',
          AWS_INSTANCE_IPV6: 'fd00::2',
          AWS_INSTANCE_PORT: '80',
        }),
      ],
      {
        ...trust,
        addresses: createAddressPolicy(['10.0.0.0/8', 'fd00::/8'], createLocalAddresses()),
      },
    );
    expect(read.export?.endpoints.map((e) => e.address)).toEqual([
      'fd00::1',
      '10.0.0.2',
      'fd00::2',
    ]);
    expect(read.export?.properties.ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it('says when DiscoverInstances returned its limit', () => {
    const many = Array.from({ length: 1000 }, (_, i) =>
      task(`t${i}`, `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`),
    );
    const read = translateInstances(sel(), many, trust);
    expect(read.notes.join()).toMatch(/limit of 1000/);
    expect(read.export?.endpoints).toHaveLength(1000);
  });
});
