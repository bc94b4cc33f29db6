import { describe, expect, it } from 'vitest';
import { checkCorefile, parseCorefile } from '../src/doctor/corefile.js';

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
