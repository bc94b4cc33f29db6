import { describe, expect, it } from 'vitest';
import {
  Attr,
  decodeServiceInstances,
  encodeClusterExport,
  encodeEndpointInstance,
  cloudMapLimits,
  type ClusterExport,
} from '@cloudmap-mcs/core';
import { buildDesiredExport } from '../src/desired.js';
import {
  isLabelKey,
  labelKeysFor,
  parseLabelKeyList,
  podLabelAttributes,
  podLabelSourceFor,
  POD_LABEL_ATTRIBUTES_ANNOTATION,
} from '../src/pod-label-attributes.js';
import { service, serviceExport, slice } from './fake-k8s.js';

const cluster = { clusterId: 'c1', clustersetId: 'set' };
const withAnnotation = (value: string) => {
  const se = serviceExport('shop', 'cart');
  se.metadata.annotations = { [POD_LABEL_ATTRIBUTES_ANNOTATION]: value };
  return se;
};

/**
 * Attributes of the fullest endpoint instance (the agent keeps the same count: the room for
 * pod labels is what they leave of Cloud Map's 30).
 */
const ENDPOINT_SCHEMA_ATTRIBUTES = 21;

describe('pod label attribute mapping', () => {
  it.each([
    ['version', true],
    ['app.kubernetes.io/version', true],
    ['example.com/track_1', true],
    ['', false],
    ['-bad', false],
    ['UPPER.example.com/x', false],
    ['a/b/c', false],
    ['x'.repeat(64), false],
  ])('isLabelKey(%j) is %s', (key, ok) => expect(isLabelKey(key)).toBe(ok));

  it('parses a key list: trimmed, deduplicated, sorted, blanks dropped', () => {
    expect(parseLabelKeyList(' track, version,,track ')).toEqual(['track', 'version']);
    expect(parseLabelKeyList('')).toEqual([]);
  });

  it('maps present labels to POD_LABEL_<key>; absent labels add nothing', () => {
    expect(
      podLabelAttributes({ version: 'red', 'app.kubernetes.io/name': 'cart', other: 'x' }, [
        'app.kubernetes.io/name',
        'track',
        'version',
      ]),
    ).toEqual({ 'POD_LABEL_app.kubernetes.io/name': 'cart', POD_LABEL_version: 'red' });
    expect(podLabelAttributes(undefined, ['version'])).toEqual({});
  });

  it('the annotation wins over the default, and an empty annotation turns the default off', () => {
    const plain = serviceExport('shop', 'cart');
    expect(labelKeysFor(plain, ['version'])).toEqual({ keys: ['version'] });
    expect(labelKeysFor(withAnnotation('track'), ['version'])).toEqual({ keys: ['track'] });
    expect(labelKeysFor(withAnnotation(''), ['version'])).toEqual({ keys: [] });
  });

  it('refuses a key set with a non-label key whole, naming the key', () => {
    const r = labelKeysFor(withAnnotation('version,bad key'), []);
    expect(r).toEqual({ keys: [], refused: 'not label keys: "bad key"' });
  });

  it('room for labels is what the schema leaves of the 30 attributes; one more is refused', () => {
    const room = cloudMapLimits.customAttributesPerInstance - ENDPOINT_SCHEMA_ATTRIBUTES;
    const keys = Array.from({ length: room + 1 }, (_, i) => `l${i}`);
    expect(labelKeysFor(withAnnotation(keys.slice(0, room).join(',')), [])).toEqual({
      keys: keys.slice(0, room).sort(),
    });
    const refused = labelKeysFor(withAnnotation(keys.join(',')), []);
    expect('refused' in refused && refused.refused).toMatch(
      new RegExp(
        `^${room + 1} pod label attributes requested; an endpoint instance has room for ${room}`,
      ),
    );
  });

  it('the schema attributes are the attribute count of the fullest endpoint instance', () => {
    const props = {
      type: 'ClusterSetIP' as const,
      ports: [{ name: 'http', protocol: 'TCP' as const, port: 80, targetPort: '8080' }],
      sessionAffinity: 'None' as const,
      ipFamilies: ['IPv4' as const],
      exportedLabels: {},
      exportedAnnotations: {},
      exportCreatedAtMs: 1,
    };
    const endpoint = {
      address: '10.0.0.1',
      addressType: 'IPv4' as const,
      ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
      conditions: { ready: true, serving: true, terminating: false },
      hostname: 'h',
      nodeName: 'n',
      zone: 'z',
    };
    const instance = encodeEndpointInstance(
      cluster,
      props,
      endpoint,
      endpoint.ports[0]!,
      props.ports[0]!,
    );
    expect(Object.keys(instance.attributes)).toHaveLength(ENDPOINT_SCHEMA_ATTRIBUTES);
  });

  it('a label never replaces a schema attribute in the encoded instance', () => {
    const exp: ClusterExport = {
      namespace: 'shop',
      name: 'cart',
      cluster,
      hasExportRecord: true,
      properties: {
        type: 'ClusterSetIP',
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: '8080' }],
        sessionAffinity: 'None',
        ipFamilies: ['IPv4'],
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
          attributes: { READY: 'false', POD_LABEL_version: 'red' },
        },
      ],
    };
    const endpoint = encodeClusterExport(exp).instances[1]!;
    expect(endpoint.attributes[Attr.Ready]).toBe('true');
    expect(endpoint.attributes['POD_LABEL_version']).toBe('red');
  });

  it('the codec limit table refuses labels whose keys or total do not fit, never trims', () => {
    const long = `${'a'.repeat(200)}.example.com/${'n'.repeat(60)}`;
    expect(isLabelKey(long)).toBe(true);
    const se = withAnnotation(long);
    const pods = podLabelSourceFor(se, [], {
      podLabels: () => ({ [long]: 'v' }),
      podLabelsReady: () => true,
    });
    const desired = buildDesiredExport(
      cluster,
      se,
      service('shop', 'cart'),
      [slice('shop', 'cart', 's1', [{ ip: '10.0.0.1', pod: 'p1' }])],
      pods.source,
    );
    if (!desired.valid) throw new Error('expected a valid export');
    const problems = encodeClusterExport(desired.export).problems;
    expect(problems.map((p) => p.code)).toEqual(['InvalidValue']);
    expect(problems[0]!.message).toContain(`POD_LABEL_${long}`);
  });
});

describe('desired export with pod labels', () => {
  const slices = [
    slice('shop', 'cart', 's1', [
      { ip: '10.0.0.1', pod: 'p1' },
      { ip: '10.0.0.2', pod: 'p2' },
      { ip: '10.0.0.3' },
    ]),
  ];
  const labels: Record<string, Record<string, string>> = {
    p1: { version: 'red', track: 'stable' },
    p2: { version: 'blue' },
  };
  const sources = {
    podLabels: (_ns: string, pod: string) => labels[pod],
    podLabelsReady: () => true,
  };

  it('attaches each pod’s labels to its endpoint; no targetRef, no attributes', () => {
    const se = withAnnotation('version,track');
    const pods = podLabelSourceFor(se, [], sources);
    const desired = buildDesiredExport(cluster, se, service('shop', 'cart'), slices, pods.source);
    if (!desired.valid) throw new Error('expected a valid export');
    expect(desired.export.endpoints.map((e) => [e.address, e.attributes])).toEqual([
      ['10.0.0.1', { POD_LABEL_track: 'stable', POD_LABEL_version: 'red' }],
      ['10.0.0.2', { POD_LABEL_version: 'blue' }],
      ['10.0.0.3', {}],
    ]);
  });

  it('an export that does not opt in encodes byte-identically to one without the feature', () => {
    const se = serviceExport('shop', 'cart');
    const pods = podLabelSourceFor(se, [], sources);
    expect(pods).toEqual({});
    const a = buildDesiredExport(cluster, se, service('shop', 'cart'), slices, pods.source);
    const b = buildDesiredExport(cluster, se, service('shop', 'cart'), slices);
    if (!a.valid || !b.valid) throw new Error('expected valid exports');
    expect(JSON.stringify(encodeClusterExport(a.export))).toBe(
      JSON.stringify(encodeClusterExport(b.export)),
    );
  });

  it('records with pod label attributes decode to the same export (readers ignore the keys)', () => {
    const se = withAnnotation('version,track');
    const pods = podLabelSourceFor(se, [], sources);
    const labelled = buildDesiredExport(cluster, se, service('shop', 'cart'), slices, pods.source);
    const plain = buildDesiredExport(cluster, se, service('shop', 'cart'), slices);
    if (!labelled.valid || !plain.valid) throw new Error('expected valid exports');
    const decode = (exp: ClusterExport) =>
      decodeServiceInstances('shop', 'cart', encodeClusterExport(exp).instances, {
        clustersetId: cluster.clustersetId,
      });
    const decoded = decode(labelled.export);
    expect(decoded.rejected).toEqual([]);
    expect(decoded.exports).toEqual(decode(plain.export).exports);
  });

  it('waits for the pod cache instead of writing without labels first', () => {
    const pods = podLabelSourceFor(withAnnotation('version'), [], {
      ...sources,
      podLabelsReady: () => false,
    });
    expect(pods).toEqual({ waiting: true });
  });
});
