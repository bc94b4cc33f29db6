import { describe, expect, it } from 'vitest';
import {
  checkReadInstance,
  createAddressPolicy,
  trustExport,
  trustInstances,
  type TrustPolicy,
} from '../../src/planning/index.js';
import { clusterExport, endpoint, frozen } from './fixtures.js';

const policy: TrustPolicy = { clustersetId: 'set-1', addresses: createAddressPolicy([]) };

describe('trustExport', () => {
  it('passes a good export through unchanged', () => {
    const input = frozen(
      clusterExport('c1', {}, [
        endpoint('10.0.0.1', { hostname: 'web-0', nodeName: 'node-1.a', zone: 'eu-west-1a' }),
      ]),
    );
    const out = trustExport(policy, input);
    expect(out.refusals).toEqual([]);
    expect(out.value).toEqual(input);
    expect(out.value).not.toBe(input);
  });

  it('ignores records of another clusterset entirely', () => {
    const input = clusterExport('c1', {}, [endpoint('10.0.0.1')], {
      cluster: { clusterId: 'c1', clustersetId: 'evil' },
    });
    const out = trustExport(policy, input);
    expect(out.value).toBeUndefined();
    expect(out.refusals.map((r) => r.reason)).toEqual(['other-clusterset']);
  });

  it.each(['', 'UPPER', 'a'.repeat(64), 'bad_id', '-x', 'x..y'])('refuses cluster id %j', (id) => {
    const out = trustExport(policy, clusterExport(id, {}, [endpoint('10.0.0.1')]));
    expect(out.value).toBeUndefined();
    expect(out.refusals[0]?.reason).toBe('invalid-cluster-id');
  });

  it('refuses hostile endpoints one by one and keeps the good ones', () => {
    const input = frozen(
      clusterExport('c1', {}, [
        endpoint('10.0.0.1'),
        endpoint('127.0.0.1'),
        endpoint('169.254.169.254'),
        endpoint('0.0.0.0'),
        endpoint('224.0.0.5'),
        endpoint('fe80::1'),
        endpoint('not-an-ip'),
        endpoint('10.0.0.2', { addressType: 'IPv6' }),
        endpoint('10.0.0.3', { ports: [{ name: 'http', protocol: 'TCP', port: 70000 }] }),
        endpoint('10.0.0.4', { ports: [{ name: 'http', protocol: 'ICMP' as 'TCP', port: 80 }] }),
        endpoint('10.0.0.5', { hostname: 'Bad Host', nodeName: 'n1', zone: 'z'.repeat(64) }),
        endpoint('10.0.0.6', {
          ports: [
            { name: 'http', protocol: 'TCP', port: 8080 },
            { name: 'metrics', protocol: 'TCP', port: 0 },
          ],
        }),
      ]),
    );
    const out = trustExport(policy, input);
    expect(out.value?.endpoints.map((e) => e.address)).toEqual([
      '10.0.0.1',
      '10.0.0.5',
      '10.0.0.6',
    ]);
    expect(out.value?.endpoints[1]).toEqual(endpoint('10.0.0.5', { nodeName: 'n1' }));
    expect(out.value?.endpoints[2]?.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
    expect(out.refusals.map((r) => [r.reason, r.subject])).toEqual([
      ['refused-address', '127.0.0.1'],
      ['refused-address', '169.254.169.254'],
      ['refused-address', '0.0.0.0'],
      ['refused-address', '224.0.0.5'],
      ['refused-address', 'fe80::1'],
      ['invalid-address', 'not-an-ip'],
      ['invalid-address', '10.0.0.2'],
      ['invalid-port', 'TCP/70000'],
      ['invalid-protocol', 'ICMP/80'],
      ['invalid-field', '10.0.0.5'],
      ['invalid-field', '10.0.0.5'],
      ['invalid-port', 'TCP/0'],
    ]);
    expect(out.refusals.every((r) => r.service === 'shop/cart' && r.cluster === 'c1')).toBe(true);
  });

  it('records claiming this cluster are refused unless this cluster exports the service', () => {
    const own: TrustPolicy = { ...policy, localClusterId: 'me' };
    const claim = clusterExport('me', {}, [endpoint('10.9.0.1')]);
    const refused = trustExport(own, claim);
    expect(refused.value).toBeUndefined();
    expect(refused.refusals).toMatchObject([{ reason: 'own-cluster-id', cluster: 'me' }]);
    expect(trustExport(own, claim, { localExport: true }).value?.endpoints).toHaveLength(1);
    // Moments after a local unexport they are our own, still going: refused, not reported.
    expect(trustExport(own, claim, { localExport: false, unexporting: true })).toEqual({
      value: undefined,
      refusals: [],
    });
    // Other clusters are not affected, with or without a local export.
    expect(trustExport(own, clusterExport('c1', {}, [endpoint('10.9.0.2')])).value).toBeDefined();
  });

  it('applies the allowed CIDRs', () => {
    const strict: TrustPolicy = {
      clustersetId: 'set-1',
      addresses: createAddressPolicy(['10.1.0.0/16']),
    };
    const out = trustExport(
      strict,
      clusterExport('c1', {}, [endpoint('10.1.2.3'), endpoint('10.2.2.3')]),
    );
    expect(out.value?.endpoints.map((e) => e.address)).toEqual(['10.1.2.3']);
    expect(out.refusals).toMatchObject([
      { reason: 'refused-address', detail: 'outside-allowed-cidrs' },
    ]);
  });

  it('writes endpoint addresses in canonical form, whatever spelling the record used', () => {
    const out = trustExport(
      { clustersetId: 'set-1', addresses: createAddressPolicy([]) },
      clusterExport('c1', {}, [endpoint('2001:DB8::0001')]),
    );
    expect(out.refusals).toEqual([]);
    expect(out.value?.endpoints.map((e) => e.address)).toEqual(['2001:db8::1']);
  });

  it('drops bad service ports, labels and properties but keeps the export', () => {
    const out = trustExport(
      policy,
      clusterExport('c1', {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'Not_Valid', protocol: 'TCP', port: 81 },
          { name: 'x', protocol: 'TCP', port: -1 },
        ],
        type: 'Weird' as 'Headless',
        sessionAffinity: 'Sticky' as 'None',
        sessionAffinityTimeoutSeconds: 0,
        internalTrafficPolicy: 'Everywhere' as 'Local',
        trafficDistribution: 'Prefer Close; rm -rf',
        exportedLabels: { team: 'a', 'bad key!': 'x', ok: 'x'.repeat(64) },
        exportedAnnotations: { 'example.com/note': 'hello world' },
        ipFamilies: ['IPv4', 'IPv4', 'IPv5' as 'IPv6'],
        exportCreatedAtMs: Number.NaN,
      }),
    );
    expect(out.value?.properties).toEqual({
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: { team: 'a' },
      exportedAnnotations: { 'example.com/note': 'hello world' },
      exportCreatedAtMs: Number.MAX_SAFE_INTEGER,
    });
    expect(out.refusals.map((r) => r.reason).sort()).toEqual(
      [
        'invalid-port-name',
        'invalid-port',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-property',
        'invalid-label',
        'invalid-label',
      ].sort(),
    );
  });
});

describe('checkReadInstance', () => {
  const ok = { id: 'c1-10_0_0_1', attributes: { AWS_INSTANCE_IPV4: '10.0.0.1', NOTE: 'a b\tc' } };
  it.each([
    ['a good instance', ok, undefined],
    ['a malformed id', { ...ok, id: 'bad id' }, 'malformed instance id'],
    ['an id over 64', { ...ok, id: 'x'.repeat(65) }, 'malformed instance id'],
    [
      'too many attributes',
      {
        ...ok,
        attributes: Object.fromEntries(
          Array.from({ length: 41 }, (_, i) => [`K${String(i)}`, 'v']),
        ),
      },
      '41 custom attributes',
    ],
    [
      'an oversized value',
      { ...ok, attributes: { A: 'x'.repeat(1025) } },
      'attribute A longer than 1024',
    ],
    [
      'a non-ASCII value',
      { ...ok, attributes: { A: 'héllo' } },
      'attribute A has non-printable characters',
    ],
    [
      'a leading space',
      { ...ok, attributes: { A: ' x' } },
      'attribute A has non-printable characters',
    ],
    ['a key with a space', { ...ok, attributes: { 'A B': 'x' } }, 'malformed attribute key'],
    [
      'a non-string value',
      { ...ok, attributes: { A: 5 as unknown as string } },
      'attribute A is not a string',
    ],
    [
      'over 5000 characters',
      {
        ...ok,
        attributes: Object.fromEntries(
          Array.from({ length: 6 }, (_, i) => [`K${String(i)}`, 'v'.repeat(1000)]),
        ),
      },
      'attributes total 6012 characters',
    ],
  ])('%s', (_name, instance, detail) => {
    expect(checkReadInstance('shop/cart', instance)?.detail).toBe(detail);
  });

  it('trustInstances keeps the good ones', () => {
    const out = trustInstances('shop/cart', [ok, { ...ok, id: 'bad id' }, { ...ok, id: 'c2-x' }]);
    expect(out.instances.map((i) => i.id)).toEqual(['c1-10_0_0_1', 'c2-x']);
    expect(out.refusals).toHaveLength(1);
  });
});
