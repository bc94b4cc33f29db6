import { describe, expect, it } from 'vitest';
import { parseNodeBinaries } from '../src/nodes/binaries.js';
import {
  cniConflist,
  egressSelectorConfig,
  kubeletConfig,
  kubeProxyConfig,
} from '../src/nodes/configs.js';
import { checkSocketPaths } from '../src/nodes/node.js';
import { addressIn, netnsPrefix, realNodePlan } from '../src/nodes/plan.js';

const clusters = [1, 2].map((i) => ({
  name: `c${i}`,
  index: i,
  nodeIps: [`172.16.${i}.1`],
  nodePodCidrs: [`10.${i}.0.0/20`],
  serviceCidr: `10.${100 + i}.0.0/16`,
}));
const dualClusters = [1, 2].map((i) => ({
  name: `c${i}`,
  index: i,
  nodeIps: [`172.16.${i}.1`, `fd00:172:16:${i}::1`],
  nodePodCidrs: [`10.${i}.0.0/20`, `fd00:10:${i}:0::/64`],
  serviceCidr: `10.${100 + i}.0.0/16,fd00:10:${100 + i}::/108`,
}));
const ipv6Clusters = [1, 2].map((i) => ({
  name: `c${i}`,
  index: i,
  nodeIps: [`fd00:172:16:${i}::1`],
  nodePodCidrs: [`fd00:10:${i}:0::/64`],
  serviceCidr: `fd00:10:${100 + i}::/108`,
}));

describe('realNodePlan', () => {
  it('routes the other clusters’ pod ranges through their nodes and names host objects by state dir', () => {
    const plan = realNodePlan('/tmp/cs-a', clusters[0]!, clusters);
    const prefix = netnsPrefix('/tmp/cs-a');
    expect(prefix).toMatch(/^mcs-[0-9a-f]{8}-$/);
    expect(plan).toMatchObject({
      nodeName: 'c1-node-0',
      netns: `${prefix}c1`,
      fabricNetns: `${prefix}fabric`,
      cgroupRoot: `${prefix}c1`,
      nodeIp: '172.16.1.1',
      nodeIps: ['172.16.1.1'],
      fabricAddresses: ['172.16.1.1/16'],
      podCidrs: ['10.1.0.0/20'],
      podGateways: ['10.1.0.1'],
      dnsIp: '10.101.0.10',
      routes: [{ dst: '10.2.0.0/20', via: '172.16.2.1' }],
      dir: '/tmp/cs-a/c1/node',
    });
  });

  it('dual stack: an address, a pod range and a route per family, IPv4 primary', () => {
    const plan = realNodePlan('/tmp/cs-a', dualClusters[0]!, dualClusters);
    expect(plan).toMatchObject({
      nodeIp: '172.16.1.1',
      nodeIps: ['172.16.1.1', 'fd00:172:16:1::1'],
      fabricAddresses: ['172.16.1.1/16', 'fd00:172:16:1::1/48'],
      podCidrs: ['10.1.0.0/20', 'fd00:10:1:0::/64'],
      podGateways: ['10.1.0.1', 'fd00:10:1::1'],
      serviceCidr: '10.101.0.0/16,fd00:10:101::/108',
      dnsIp: '10.101.0.10',
      routes: [
        { dst: '10.2.0.0/20', via: '172.16.2.1' },
        { dst: 'fd00:10:2:0::/64', via: 'fd00:172:16:2::1' },
      ],
    });
  });

  it('IPv6 only: every address, the gateway and the DNS IP are IPv6', () => {
    const plan = realNodePlan('/tmp/cs-a', ipv6Clusters[1]!, ipv6Clusters);
    expect(plan).toMatchObject({
      nodeIp: 'fd00:172:16:2::1',
      fabricAddresses: ['fd00:172:16:2::1/48'],
      podGateways: ['fd00:10:2::1'],
      dnsIp: 'fd00:10:102::a',
      routes: [{ dst: 'fd00:10:1:0::/64', via: 'fd00:172:16:1::1' }],
    });
  });

  it('gives clustersets in different state directories different host names', () => {
    expect(netnsPrefix('/tmp/cs-a')).not.toBe(netnsPrefix('/tmp/cs-b'));
    // Interface names are limited to 15 characters; netns names have no such limit but stay short.
    expect(realNodePlan('/x', clusters[1]!, clusters).fabricLink.length).toBeLessThanOrEqual(15);
  });

  it('computes addresses inside a range', () => {
    expect(addressIn('10.101.0.0/16', 10)).toBe('10.101.0.10');
    expect(addressIn('10.1.240.0/20', 257)).toBe('10.1.241.1');
    expect(addressIn('fd00:10:101::/108', 10)).toBe('fd00:10:101::a');
    expect(addressIn('fd00:10:1:0::/64', 1)).toBe('fd00:10:1::1');
    expect(() => addressIn('fd00:10:1:0:1::/80', 1)).not.toThrow();
    expect(() => addressIn('fd00::1/64', 1)).toThrow(RangeError);
  });
});

describe('node configuration files', () => {
  const plan = realNodePlan('/s', clusters[1]!, clusters);

  it('kubelet: cgroup v1 allowed, own cgroup root, cluster DNS, node IP', () => {
    const y = kubeletConfig(plan, { containerdSocket: '/s/c2/node/ctrd.sock', resolvConf: '/r' });
    expect(y).toContain('failCgroupV1: false');
    expect(y).toContain(`cgroupRoot: /${plan.cgroupRoot}`);
    expect(y).toContain('clusterDNS: [10.102.0.10]');
    expect(y).toContain('address: 172.16.2.1');
    expect(y).toContain('containerRuntimeEndpoint: unix:///s/c2/node/ctrd.sock');
  });

  it('CNI: a bridge over the node’s pod range, no masquerade, IPAM state in the node dir', () => {
    const c = JSON.parse(cniConflist(plan, '/s/ipam')) as {
      plugins: { type: string; ipMasq?: boolean; ipam?: { dataDir: string; ranges: unknown } }[];
    };
    expect(c.plugins.map((p) => p.type)).toEqual(['bridge', 'loopback']);
    expect(c.plugins[0]!.ipMasq).toBe(false);
    expect(c.plugins[0]!.ipam).toMatchObject({
      dataDir: '/s/ipam',
      ranges: [[{ subnet: '10.2.0.0/20', gateway: '10.2.0.1' }]],
    });
  });

  it('CNI and kube-proxy on a dual-stack node: both families', () => {
    const dual = realNodePlan('/s', dualClusters[1]!, dualClusters);
    const c = JSON.parse(cniConflist(dual, '/s/ipam')) as {
      plugins: { ipam?: { ranges: unknown; routes: unknown } }[];
    };
    expect(c.plugins[0]!.ipam).toMatchObject({
      ranges: [
        [{ subnet: '10.2.0.0/20', gateway: '10.2.0.1' }],
        [{ subnet: 'fd00:10:2:0::/64', gateway: 'fd00:10:2::1' }],
      ],
      routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
    });
    const y = kubeProxyConfig(dual, '/k', '10.2.0.0/16,fd00:10:2::/56');
    expect(y).toContain('clusterCIDR: 10.2.0.0/16,fd00:10:2::/56');
    expect(y).toContain('nodePortAddresses: ["172.16.2.1/32", "fd00:172:16:2::1/128"]');
  });

  it('egress selector: cluster traffic through the proxy socket', () => {
    const y = egressSelectorConfig('/s/c1/node/egress.sock');
    expect(y).toContain('name: cluster');
    expect(y).toContain('proxyProtocol: HTTPConnect');
    expect(y).toContain('udsName: /s/c1/node/egress.sock');
  });
});

describe('parseNodeBinaries', () => {
  it('needs every binary named', () => {
    const out = ['kubelet', 'kube-proxy', 'coredns', 'pause', 'echo', 'connect-proxy', 'nc']
      .map((n) => `${n}=/c/${n}`)
      .join('\n');
    expect(parseNodeBinaries(`${out}\n`).coredns).toBe('/c/coredns');
    expect(() => parseNodeBinaries('kubelet=/c/kubelet\n')).toThrow(/did not name kube-proxy/);
  });
});

describe('checkSocketPaths', () => {
  it('refuses a node directory whose kubelet sockets would not fit a Unix socket path', () => {
    expect(() => checkSocketPaths('/tmp/cs/c1/node')).not.toThrow();
    expect(() => checkSocketPaths(`/${'x'.repeat(80)}/c1/node`)).toThrow(
      /too long for Unix sockets/,
    );
  });
});
