import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkCoreDns, checkCoreDnsCache } from '../src/doctor/corefile.js';

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

// Without a CoreDNS image, checkCoreDns is the Corefile check alone.
describe('checkCoreDns: the Corefile', () => {
  it.each([
    ['kubernetes plugin with multicluster', kubernetesForm, 'ok', /kubernetes plugin serves/],
    ['external multicluster plugin', pluginForm, 'ok', /coredns\/multicluster plugin/],
    ['a stock Corefile (commented out)', stock, 'fail', /has no `multicluster clusterset.local`/],
    ['zone missing from kubernetes', notAuthoritative, 'fail', /not authoritative/],
    ['server block not serving the zone', wrongServer, 'fail', /does not serve clusterset.local/],
    ['a dedicated clusterset.local server block', ownServer, 'ok', /kubernetes plugin serves/],
  ])('%s', (_name, corefile, status, message) => {
    const r = checkCoreDns(corefile, 'ConfigMap kube-system/coredns', undefined);
    expect(r.status).toBe(status);
    expect(r.message).toMatch(message);
    if (status !== 'ok') expect(r.fix).toContain('multicluster clusterset.local');
  });

  it('fails without a Corefile', () => {
    expect(checkCoreDns(undefined, 'no ConfigMap kube-system/coredns', undefined)).toMatchObject({
      status: 'fail',
      message: 'no Corefile found (no ConfigMap kube-system/coredns)',
    });
  });

  it('parses directives with their enclosing blocks', () => {
    // `multicluster clusterset.local` read inside `kubernetes` inside `.:53`: the plugin form.
    expect(checkCoreDns(kubernetesForm, 'x', undefined)).toEqual({
      group: 'coredns',
      subject: 'CoreDNS clusterset.local',
      status: 'ok',
      message: 'kubernetes plugin serves clusterset.local with multicluster (x)',
    });
    // After the kubernetes block closes, a multicluster line is the server block's own.
    const afterBlock = `.:53 {
    kubernetes cluster.local clusterset.local {
        pods insecure
    }
    multicluster clusterset.local
}
`;
    expect(checkCoreDns(afterBlock, 'x', undefined).message).toBe(
      'coredns/multicluster plugin serves clusterset.local (x)',
    );
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

  // The version is read from the tag (after the last ':', v and a build suffix allowed). It
  // shows only when older than 1.12.2, so the newer tags have an older twin of the same form;
  // a tag that is no version (latest) is not judged.
  it.each([
    ['a:v1.12.2', 'no'],
    ['a:v1.12.1', '1.12.1'],
    ['a:1.11.3-eksbuild.1', '1.11.3'],
    ['host:5000/a:v2.0.0', 'no'],
    ['host:5000/a:v1.2.0', '1.2.0'],
    ['a:latest', 'no'],
  ])('reads the version of %s (older than 1.12.2: %s)', (image, older) => {
    const r = checkCoreDns(kubernetesForm, 'x', image);
    expect(r.message).toBe(
      older === 'no'
        ? `kubernetes plugin serves clusterset.local with multicluster (x), image ${image}`
        : `CoreDNS ${older} (${image}) predates the kubernetes plugin's multicluster option (1.12.2); it will not load this Corefile`,
    );
  });
});

/** The Corefile of samples/coredns, as users apply it. */
function sampleCorefile(): string {
  const yaml = readFileSync(
    new URL('../../../samples/coredns/corefile-configmap.yaml', import.meta.url),
    'utf8',
  );
  const body = yaml.slice(yaml.indexOf('Corefile: |') + 'Corefile: |'.length);
  return body.replace(/^ {4}/gm, '');
}

const withCache = (block: string) => `.:53 {
    kubernetes cluster.local clusterset.local {
        multicluster clusterset.local
    }
    ${block}
}
`;

describe('checkCoreDnsCache', () => {
  it('passes the sample Corefile (success and denial caches off for clusterset.local)', () => {
    expect(checkCoreDnsCache(sampleCorefile(), 'x')).toEqual({
      group: 'coredns',
      subject: 'CoreDNS cache of clusterset.local',
      status: 'ok',
      message: 'answered from the kubernetes plugin, not cached (x)',
    });
  });

  it('warns about a stock cache 30, naming both caches and the lines to add', () => {
    const r = checkCoreDnsCache(kubernetesForm, 'ConfigMap kube-system/coredns');
    expect(r?.status).toBe('warn');
    expect(r?.message).toMatch(/caches clusterset.local success and denial answers/);
    expect(r?.message).toMatch(/lacks endpoints; .* stays NXDOMAIN/);
    expect(r?.fix).toContain(
      '    disable success clusterset.local\n    disable denial clusterset.local',
    );
  });

  it.each([
    [
      'denial only disabled (the sample before the fix)',
      'cache 30 {\n disable denial clusterset.local\n }',
      /caches clusterset.local success answers/,
    ],
    [
      'success only disabled',
      'cache 30 {\n disable success clusterset.local\n }',
      /caches clusterset.local denial answers/,
    ],
    [
      'another zone disabled',
      'cache 30 {\n disable success example.org\n disable denial example.org\n }',
      /success and denial/,
    ],
  ])('warns: %s', (_name, block, message) => {
    const r = checkCoreDnsCache(withCache(block), 'x');
    expect(r?.status).toBe('warn');
    expect(r?.message).toMatch(message);
  });

  it.each([
    ['no cache plugin', '# no cache'],
    ['both disabled for every zone', 'cache 30 {\n disable success\n disable denial .\n }'],
    [
      'both disabled for a parent zone',
      'cache 30 {\n disable success local\n disable denial local.\n }',
    ],
  ])('passes: %s', (_name, block) => {
    expect(checkCoreDnsCache(withCache(block), 'x')?.status).toBe('ok');
  });

  it('says nothing when no server block serves clusterset.local (checkCoreDns fails then)', () => {
    expect(checkCoreDnsCache(stock, 'x')).toBeUndefined();
    expect(checkCoreDnsCache(undefined, 'x')).toBeUndefined();
  });
});
