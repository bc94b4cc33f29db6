import { describe, expect, it } from 'vitest';
import { renderTraffic } from '../../src/demo/traffic.js';

describe('renderTraffic', () => {
  it('lists the answers per cluster with pod names, the latencies and the failover time', () => {
    const lines = renderTraffic({
      fromCluster: 'c2',
      name: 'hello.demo.svc.clusterset.local.',
      resolvedTo: ['10.102.0.7'],
      clustersetIp: '10.102.0.7',
      dnsMs: 4.26,
      requestMs: 21.7,
      requests: 20,
      answers: { c2: { 'hello-b': 8 }, c1: { 'hello-a2': 3, 'hello-a1': 9 } },
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
});
