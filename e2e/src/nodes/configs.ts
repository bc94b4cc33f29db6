import type { RealNodePlan } from './plan.js';

/**
 * The configuration files of a real node's components, as pure functions of the node plan
 * (unit-tested). Why each non-default setting: docs/adr/0013-real-nodes.md.
 */

export interface NodePaths {
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  readonly cniConfDir: string;
  readonly cniIpamDir: string;
  readonly cniBinDir: string;
  readonly runc: string;
}

export function containerdConfig(p: NodePaths, sandboxImage: string): string {
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"
# Only what the CRI plugin needs; the others would probe for tools this machine lacks.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${p.containerdSocket}"
[ttrpc]
  address = "${p.containerdSocket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  # The locally built pause image: nothing is ever pulled.
  sandbox_image = "${sandboxImage}"
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  # Pod network namespaces are mounted under this node's state directory, not /run/netns,
  # so teardown finds every one of them.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "${p.runc}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${p.cniBinDir}"
    conf_dir = "${p.cniConfDir}"
    max_conf_num = 1
`;
}

/** bridge + host-local + loopback; the bridge lives in the node's namespace, no masquerade. */
export function cniConflist(plan: RealNodePlan, ipamDir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'mcs-pods',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: ipamDir,
            // One range per family: a pod gets an address of each (dual stack).
            ranges: plan.podCidrs.map((subnet, f) => [{ subnet, gateway: plan.podGateways[f] }]),
            routes: plan.podCidrs.map((c) => ({ dst: c.includes(':') ? '::/0' : '0.0.0.0/0' })),
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletPaths {
  readonly containerdSocket: string;
  readonly resolvConf: string;
}

export function kubeletConfig(plan: RealNodePlan, p: KubeletPaths): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
# The machines run cgroup v1; kubelet >= 1.35 refuses it unless told otherwise.
failCgroupV1: false
failSwapOn: false
cgroupRoot: /${plan.cgroupRoot}
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
containerRuntimeEndpoint: unix://${p.containerdSocket}
# Ports are per network namespace: every node can use the defaults.
address: ${plan.nodeIp}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDNS: [${plan.dnsIp}]
clusterDomain: cluster.local
resolvConf: ${p.resolvConf}
# The API server reaches the kubelet without client certificates (see the ADR); the node's
# namespace is reachable only through the clusterset's own proxy.
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
registerNode: true
staticPodPath: ""
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
# Never garbage-collect the locally imported images: there is no registry to pull them again.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
protectKernelDefaults: false
makeIPTablesUtilChains: false
podPidsLimit: -1
maxPods: 110
`;
}

export function kubeProxyConfig(
  plan: RealNodePlan,
  kubeconfig: string,
  clusterCidr: string,
): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${kubeconfig}}
hostnameOverride: ${plan.nodeName}
mode: nftables
clusterCIDR: ${clusterCidr}
bindAddress: ${plan.nodeIp}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [${plan.nodeIps.map((ip) => `"${ip}/${ip.includes(':') ? 128 : 32}"`).join(', ')}]
# 0 = leave the (host-wide) conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
`;
}

/** kube-apiserver egress: traffic to nodes (exec, logs, port-forward) goes through the proxy. */
export function egressSelectorConfig(proxySocket: string): string {
  return `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
  - name: cluster
    connection:
      proxyProtocol: HTTPConnect
      transport:
        uds:
          udsName: ${proxySocket}
`;
}
