import { describe, expect, it } from 'vitest';
import { renderTraffic } from '../../src/demo/traffic.js';

describe('renderTraffic', () => {
  it('lists the answers per cluster with pod names, the latencies and the failover time', () => {
    const lines = renderTraffic({
      fromCluster: 'c2',
      name: 'hello.demo.svc.clusterset.local.',
      families: [
        {
          family: 'ipv4',
          resolvedTo: ['10.102.0.7'],
          clustersetIp: '10.102.0.7',
          dnsMs: 4.26,
          requestMs: 21.7,
          requests: 20,
          answers: { c2: { 'hello-b': 8 }, c1: { 'hello-a2': 3, 'hello-a1': 9 } },
        },
      ],
      failoverSeconds: 4,
    });
    expect(lines).toEqual([
      'From a pod in c2 (real nodes: kubelet, containerd, kube-proxy, CoreDNS):',
      "  hello.demo.svc.clusterset.local. resolves to 10.102.0.7 (c2's clusterset IP 10.102.0.7); DNS answer 4.3 ms (median)",
      '  20 requests through the clusterset IP, 21.7 ms each (median), answered by:',
      '    c1: 12  (hello-a1 ×9, hello-a2 ×3)',
      '    c2: 8  (hello-b ×8)',
      '  c1 scaled to 0: every answer came from c2 after 4.0 s',
    ]);
  });

  it('dual stack: A and AAAA, and the requests over each family', () => {
    const family = (f: 'ipv4' | 'ipv6', ip: string) => ({
      family: f,
      resolvedTo: [ip],
      clustersetIp: ip,
      dnsMs: 2,
      requestMs: 10,
      requests: 4,
      answers: { c1: { 'hello-a': 2 }, c2: { 'hello-b': 2 } },
    });
    const lines = renderTraffic({
      fromCluster: 'c2',
      name: 'hello.demo.svc.clusterset.local.',
      families: [family('ipv4', '10.102.0.7'), family('ipv6', 'fd00:10:102::7')],
    });
    expect(lines).toEqual([
      'From a pod in c2 (real nodes: kubelet, containerd, kube-proxy, CoreDNS):',
      "  hello.demo.svc.clusterset.local. A resolves to 10.102.0.7 (c2's clusterset IP 10.102.0.7); DNS answer 2.0 ms (median)",
      '  4 requests over IPv4 through the clusterset IP, 10.0 ms each (median), answered by:',
      '    c1: 2  (hello-a ×2)',
      '    c2: 2  (hello-b ×2)',
      "  hello.demo.svc.clusterset.local. AAAA resolves to fd00:10:102::7 (c2's clusterset IP fd00:10:102::7); DNS answer 2.0 ms (median)",
      '  4 requests over IPv6 through the clusterset IP, 10.0 ms each (median), answered by:',
      '    c1: 2  (hello-a ×2)',
      '    c2: 2  (hello-b ×2)',
    ]);
  });
});
