import { describe, expect, it } from 'vitest';
import { identityFromProperties } from '../src/identity.js';

const props = (cluster?: string, clusterset?: string) => [
  ...(cluster === undefined ? [] : [{ name: 'cluster.clusterset.k8s.io', value: cluster }]),
  ...(clusterset === undefined ? [] : [{ name: 'clusterset.k8s.io', value: clusterset }]),
  { name: 'other.example.com', value: 'x' },
];

describe('identityFromProperties', () => {
  it.each([
    ['both valid', props('c1', 'demo'), { clusterId: 'c1', clustersetId: 'demo' }, []],
    [
      'cluster id missing',
      props(undefined, 'demo'),
      undefined,
      ['cluster.clusterset.k8s.io fail missing'],
    ],
    ['clusterset missing', props('c1'), undefined, ['clusterset.k8s.io fail missing']],
    [
      'cluster id invalid',
      props('C_1', 'demo'),
      undefined,
      [
        "cluster.clusterset.k8s.io fail value \"C_1\" must be a lowercase RFC 1123 DNS subdomain: [a-z0-9] and '-' in '.'-separated labels, starting and ending with [a-z0-9]",
      ],
    ],
    [
      'clusterset with whitespace',
      props('c1', 'my set'),
      undefined,
      ['clusterset.k8s.io fail value "my set" must be printable ASCII without whitespace'],
    ],
    [
      'cluster id with a dot is valid but warned',
      props('c1.eu', 'demo'),
      { clusterId: 'c1.eu', clustersetId: 'demo' },
      [
        'cluster.clusterset.k8s.io warn value "c1.eu" is not a single DNS label, so <host>.<clusterid>.<svc>.<ns>.svc.clusterset.local names cannot resolve',
      ],
    ],
  ])('%s', (_name, properties, identity, problems) => {
    const result = identityFromProperties(properties);
    expect(result.identity).toEqual(identity);
    expect(result.problems.map((p) => `${p.property} ${p.severity} ${p.problem}`)).toEqual(
      problems,
    );
  });

  const notALabel = (value: string) =>
    `cluster.clusterset.k8s.io warn value "${value}" is not a single DNS label, so <host>.<clusterid>.<svc>.<ns>.svc.clusterset.local names cannot resolve`;
  // A valid cluster id that is not a single DNS label (a dot, over 63 characters) is warned.
  // '-a' and '' are no DNS subdomain: core's validation refuses them before the label check.
  it.each([
    ['a', []],
    ['a-1', []],
    ['a.b', [notALabel('a.b')]],
    [
      '-a',
      [
        "cluster.clusterset.k8s.io fail value \"-a\" must be a lowercase RFC 1123 DNS subdomain: [a-z0-9] and '-' in '.'-separated labels, starting and ending with [a-z0-9]",
      ],
    ],
    ['x'.repeat(64), [notALabel('x'.repeat(64))]],
    ['', ['cluster.clusterset.k8s.io fail value "" must not be empty']],
  ])('the cluster id %j as a DNS label', (value, problems) => {
    const result = identityFromProperties(props(value, 'demo'));
    expect(result.problems.map((p) => `${p.property} ${p.severity} ${p.problem}`)).toEqual(
      problems,
    );
  });
});
