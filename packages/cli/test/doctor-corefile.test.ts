import { describe, expect, it } from 'vitest';
import {
  checkCoreDns,
  checkCorefile,
  coreDnsVersion,
  parseCorefile,
} from '../src/doctor/corefile.js';

const kubernetesForm = `.:53 {
    errors
    health
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        pods insecure
        multicluster clusterset.local
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
}
`;

const pluginForm = `.:53 {
    multicluster clusterset.local # the coredns/multicluster plugin
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
    }
}
`;

const stock = `.:53 {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
    }
    # multicluster clusterset.local
}
`;

const notAuthoritative = `.:53 {
    kubernetes cluster.local {
        multicluster clusterset.local
    }
}
`;

const wrongServer = `cluster.local:53 {
    multicluster clusterset.local
}
`;

const ownServer = `clusterset.local:53 {
    kubernetes clusterset.local {
        multicluster clusterset.local
    }
}
`;

describe('checkCorefile', () => {
  it.each([
    ['kubernetes plugin with multicluster', kubernetesForm, 'ok', /kubernetes plugin serves/],
    ['external multicluster plugin', pluginForm, 'ok', /coredns\/multicluster plugin/],
    ['a stock Corefile (commented out)', stock, 'fail', /has no `multicluster clusterset.local`/],
    ['zone missing from kubernetes', notAuthoritative, 'fail', /not authoritative/],
    ['server block not serving the zone', wrongServer, 'fail', /does not serve clusterset.local/],
    ['a dedicated clusterset.local server block', ownServer, 'ok', /kubernetes plugin serves/],
  ])('%s', (_name, corefile, status, message) => {
    const r = checkCorefile(corefile, 'ConfigMap kube-system/coredns');
    expect(r.status).toBe(status);
    expect(r.message).toMatch(message);
    if (status !== 'ok') expect(r.fix).toContain('multicluster clusterset.local');
  });

  it('fails without a Corefile', () => {
    expect(checkCorefile(undefined, 'no ConfigMap kube-system/coredns')).toMatchObject({
      status: 'fail',
      message: 'no Corefile found (no ConfigMap kube-system/coredns)',
    });
  });

  it('parses directives with their enclosing blocks', () => {
    expect(parseCorefile(kubernetesForm).find((d) => d.name === 'multicluster')).toEqual({
      name: 'multicluster',
      args: ['clusterset.local'],
      parents: ['.:53', 'kubernetes'],
    });
  });
});

describe('checkCoreDns', () => {
  it.each([
    [
      'registry.k8s.io/coredns/coredns:v1.12.2',
      'ok',
      /image registry.k8s.io\/coredns\/coredns:v1.12.2/,
    ],
    ['registry.k8s.io/coredns/coredns:v1.13.1', 'ok', /v1.13.1/],
    [
      '602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.4-eksbuild.2',
      'fail',
      /CoreDNS 1.11.4 .* predates/,
    ],
    ['registry.k8s.io/coredns/coredns:v1.12.1', 'fail', /1.12.1/],
    ['my-registry/coredns:latest', 'ok', /latest/],
  ])('kubernetes-plugin form with %s: %s', (image, status, message) => {
    const r = checkCoreDns(kubernetesForm, 'ConfigMap kube-system/coredns', image);
    expect(r.status).toBe(status);
    expect(r.message).toMatch(message);
    if (status === 'fail') expect(r.fix).toContain('upgrade CoreDNS to 1.12.2');
  });

  it('does not judge the version of a build with the external plugin, nor without a Deployment', () => {
    expect(checkCoreDns(pluginForm, 'x', 'coredns:v1.8.0').status).toBe('ok');
    expect(checkCoreDns(kubernetesForm, 'x', undefined)).toMatchObject({ status: 'ok' });
  });

  it.each([
    ['a:v1.12.2', [1, 12, 2]],
    ['a:1.11.3-eksbuild.1', [1, 11, 3]],
    ['host:5000/a:v2.0.0', [2, 0, 0]],
    ['a:latest', undefined],
  ])('coreDnsVersion(%s)', (image, version) => {
    expect(coreDnsVersion(image)).toEqual(version);
  });
});
