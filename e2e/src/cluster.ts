import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { httpGet } from './http.js';
import { loadKubeconfig, writeKubeconfig } from './kubeconfig.js';
import type { Progress } from './log.js';
import { clusterNetwork, type ClusterNetwork, type IpFamilyMode } from './network.js';
import { kwokStagesFile } from './paths.js';
import { allocatePorts, loopback, releasePortClaims } from './ports.js';
import { spawnProcess, stopProcesses, type ProcessRecord } from './processes.js';
import { installCrds, statusOf } from './resources.js';
import type { NodeBinaries } from './nodes/binaries.js';
import { egressSelectorConfig } from './nodes/configs.js';
import { installCoreDns, publishApiserverEndpoint, waitCoreDnsReady } from './nodes/dns.js';
import { nodeFiles, startRealNode, waitNodeReady } from './nodes/node.js';
import type { RealNodePlan } from './nodes/plan.js';
import { waitFor } from './wait.js';

export interface ClusterPorts {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
}

/** What a started cluster looks like from outside; serialisable into clusterset.json. */
export interface ClusterInfo {
  readonly name: string;
  readonly index: number;
  /** Admin kubeconfig (system:masters, bearer token). */
  readonly kubeconfig: string;
  readonly server: string;
  readonly dir: string;
  readonly network: ClusterNetwork;
  readonly nodeNames: readonly string[];
  readonly ports: ClusterPorts;
  /** 'real': kubelet, containerd, kube-proxy and CoreDNS instead of kwok (docs/harness.md). */
  readonly nodes?: 'fake' | 'real';
  /** The real node's namespace, addresses and cluster DNS IP (real nodes only). */
  readonly realNode?: RealNodePlan;
}

/** What a cluster with a real node needs besides the control plane. */
export interface RealNodeSetup {
  readonly plan: RealNodePlan;
  readonly bins: NodeBinaries;
  /** OCI archives imported into the node's containerd. */
  readonly images: readonly string[];
}

export interface StartClusterOptions {
  readonly name: string;
  readonly index: number;
  readonly stateDir: string;
  readonly binDir: string;
  readonly nodes: number;
  readonly overlapPodCidrs: boolean;
  readonly detached: boolean;
  readonly progress: Progress;
  readonly readyTimeoutMs?: number;
  /** Write an audit log of every write request to `<dir>/logs/audit.log` (benchmarks). */
  readonly auditWrites?: boolean;
  /** Run one real node (and CoreDNS) instead of kwok's fake nodes. */
  readonly realNode?: RealNodeSetup;
  /** IP families of Services, pods and nodes (docs/harness.md). Default 'ipv4'. */
  readonly ipFamily?: IpFamilyMode;
}

/**
 * Audit policy of `auditWrites`: metadata (who, verb, resource, time, status) of every
 * mutating request, nothing for reads, one event per request (ResponseComplete).
 */
export const auditWritesPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
`;

export interface StartedCluster {
  readonly info: ClusterInfo;
  readonly processes: readonly ProcessRecord[];
  kubeConfig(): KubeConfig;
}

const token = (): string => randomBytes(24).toString('base64url');

function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** kube-apiserver flags of `auditWrites` (JSON lines, written synchronously, never rotated). */
function auditArgs(enabled: boolean, sub: (p: string) => string): string[] {
  if (!enabled) return [];
  writeFileSync(sub('audit-policy.yaml'), auditWritesPolicy);
  return [
    `--audit-policy-file=${sub('audit-policy.yaml')}`,
    `--audit-log-path=${sub('logs/audit.log')}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
  ];
}

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok for one
 * cluster on 127.0.0.1 and returns once the API server is ready, the controllers and the
 * scheduler are healthy, every fake node is Ready, the `default` ServiceAccount exists and the
 * CRDs are Established. On failure everything started so far is stopped.
 */
export async function startCluster(opts: StartClusterOptions): Promise<StartedCluster> {
  const dir = join(opts.stateDir, opts.name);
  const sub = (p: string): string => join(dir, p);
  for (const d of ['pids', 'logs', 'etcd', 'pki', 'auth', 'kubeconfigs', 'kwok']) {
    mkdirSync(sub(d), { recursive: true, mode: 0o700 });
  }
  const ipFamily = opts.ipFamily ?? 'ipv4';
  const network = clusterNetwork(opts.index, opts.nodes, opts.overlapPodCidrs, ipFamily);
  const [etcdClient, etcdPeer, apiserver, controllerManager, scheduler] = await allocatePorts(
    5,
    dir,
  );
  const ports: ClusterPorts = {
    etcdClient: etcdClient!,
    etcdPeer: etcdPeer!,
    apiserver: apiserver!,
    controllerManager: controllerManager!,
    scheduler: scheduler!,
  };
  const server = `https://${loopback}:${ports.apiserver}`;
  const processes: ProcessRecord[] = [];
  const start = (name: string, args: string[], env?: Record<string, string>): void => {
    processes.push(
      spawnProcess({
        name: `${opts.name}/${name}`,
        command: join(opts.binDir, name),
        args,
        logFile: sub(`logs/${name}.log`),
        pidFile: sub(`pids/${name}.pid`),
        detached: opts.detached,
        cwd: dir,
        ...(env !== undefined ? { env } : {}),
      }),
    );
  };
  const failWith = async (err: unknown, component: string): Promise<never> => {
    await stopProcesses(processes, 3_000);
    releasePortClaims(Object.values(ports));
    const log = tail(sub(`logs/${component}.log`));
    throw new Error(
      `cluster ${opts.name}: ${component} did not become ready${log ? `; last log lines:\n${log}` : ''}`,
      {
        cause: err,
      },
    );
  };

  // Credentials: one bearer token per identity, and a service-account signing key.
  const tokens = {
    admin: token(),
    kcm: token(),
    scheduler: token(),
    kwok: token(),
    node: token(),
  };
  const real = opts.realNode;
  writeFileSync(
    sub('auth/tokens.csv'),
    [
      `${tokens.admin},cluster-admin,uid-admin,"system:masters"`,
      `${tokens.kcm},system:kube-controller-manager,uid-kcm,"system:masters"`,
      `${tokens.scheduler},system:kube-scheduler,uid-scheduler,"system:masters"`,
      `${tokens.kwok},kwok-controller,uid-kwok,"system:masters"`,
      // kubelet and kube-proxy of the real node (like the other components: see ADR 0013).
      ...(real
        ? [`${tokens.node},system:node:${real.plan.nodeName},uid-node,"system:masters"`]
        : []),
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(sub('pki/sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  writeFileSync(sub('pki/sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));

  const etcdUrl = `http://${loopback}:${ports.etcdClient}`;
  const peerUrl = `http://${loopback}:${ports.etcdPeer}`;
  start('etcd', [
    `--name=${opts.name}`,
    `--data-dir=${sub('etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=${opts.name}=${peerUrl}`,
    '--initial-cluster-state=new',
    '--unsafe-no-fsync=true',
    '--auto-compaction-retention=1',
    '--log-level=warn',
  ]);
  opts.progress(`${opts.name}: etcd on ${etcdUrl}`);
  await waitFor('etcd health', async () => (await httpGet(`${etcdUrl}/health`)).status === 200, {
    timeoutMs: 30_000,
  }).catch((err: unknown) => failWith(err, 'etcd'));

  const certDir = sub('pki');
  const realNodeFlags: string[] = [];
  if (real) {
    // Exec, logs and port-forward reach the kubelet in its network namespace through the
    // node's CONNECT proxy; the kubelet's Hostname address would go to the host's resolver.
    const egress = sub('pki/egress-selector.yaml');
    writeFileSync(egress, egressSelectorConfig(nodeFiles(real.plan.dir).egressSocket));
    realNodeFlags.push(
      `--egress-selector-config-file=${egress}`,
      '--kubelet-preferred-address-types=InternalIP',
    );
  }
  start('kube-apiserver', [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${loopback}`,
    `--advertise-address=${loopback}`,
    `--secure-port=${ports.apiserver}`,
    '--endpoint-reconciler-type=none',
    `--cert-dir=${certDir}`,
    `--token-auth-file=${sub('auth/tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--service-cluster-ip-range=${network.serviceCidr}`,
    `--service-account-issuer=https://kubernetes.default.svc.${opts.name}.local`,
    `--service-account-key-file=${sub('pki/sa.pub')}`,
    `--service-account-signing-key-file=${sub('pki/sa.key')}`,
    '--allow-privileged=true',
    '--profiling=false',
    '--v=1',
    ...auditArgs(opts.auditWrites === true, sub),
    ...realNodeFlags,
  ]);
  opts.progress(`${opts.name}: kube-apiserver on ${server}`);
  const caFile = join(certDir, 'apiserver.crt');
  await waitFor(
    'kube-apiserver /readyz',
    async () =>
      existsSync(caFile) &&
      (await httpGet(`${server}/readyz`, { ca: readFileSync(caFile, 'utf8'), token: tokens.admin }))
        .status === 200,
    { timeoutMs: opts.readyTimeoutMs ?? 120_000, intervalMs: 300 },
  ).catch((err: unknown) => failWith(err, 'kube-apiserver'));
  const caPem = readFileSync(caFile, 'utf8');

  const kubeconfig = join(opts.stateDir, `${opts.name}.kubeconfig`);
  writeKubeconfig(kubeconfig, {
    name: opts.name,
    server,
    caPem,
    user: `${opts.name}-admin`,
    token: tokens.admin,
  });
  const componentConfig = (id: keyof typeof tokens): string => {
    const path = sub(`kubeconfigs/${id}.kubeconfig`);
    writeKubeconfig(path, { name: opts.name, server, caPem, user: id, token: tokens[id] });
    return path;
  };

  start('kube-controller-manager', [
    `--kubeconfig=${componentConfig('kcm')}`,
    '--leader-elect=false',
    `--bind-address=${loopback}`,
    `--secure-port=${ports.controllerManager}`,
    `--cert-dir=${sub('pki/kcm')}`,
    `--cluster-name=${opts.name}`,
    `--service-account-private-key-file=${sub('pki/sa.key')}`,
    `--root-ca-file=${caFile}`,
    `--service-cluster-ip-range=${network.serviceCidr}`,
    '--controllers=*',
    '--profiling=false',
    '--v=1',
  ]);
  start('kube-scheduler', [
    `--kubeconfig=${componentConfig('scheduler')}`,
    '--leader-elect=false',
    `--bind-address=${loopback}`,
    `--secure-port=${ports.scheduler}`,
    `--cert-dir=${sub('pki/scheduler')}`,
    '--profiling=false',
    '--v=1',
  ]);
  if (!real)
    start(
      'kwok',
      [
        `--kubeconfig=${componentConfig('kwok')}`,
        '--manage-all-nodes=true',
        // kwok gives a Pod one IP per range of its node's spec.podCIDRs (two for dual
        // stack); --cidr, one range, is only for nodes without podCIDRs: the primary family's.
        `--cidr=${network.podCidr.split(',')[0]!}`,
        `--node-ip=${network.nodeIps[0]!}`,
        '--node-lease-duration-seconds=40',
        `--config=${kwokStagesFile()}`,
      ],
      { KWOK_WORKDIR: sub('kwok') },
    );
  opts.progress(`${opts.name}: controller-manager, scheduler${real ? '' : ' and kwok'} started`);

  const kc = loadKubeconfig(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const nodeNames = real
    ? [real.plan.nodeName]
    : network.nodeIps.map((_, k) => `${opts.name}-node-${k}`);
  try {
    if (!real) {
      for (const [k, name] of nodeNames.entries()) await createNode(core, name, network, k);
    }
    await installCrds(kc);
  } catch (err) {
    return failWith(err, 'kube-apiserver');
  }
  const healthz = (port: number) => async () =>
    (await httpGet(`https://${loopback}:${port}/healthz`, { insecure: true })).status === 200;
  await waitFor('kube-controller-manager /healthz', healthz(ports.controllerManager)).catch(
    (err: unknown) => failWith(err, 'kube-controller-manager'),
  );
  await waitFor('kube-scheduler /healthz', healthz(ports.scheduler)).catch((err: unknown) =>
    failWith(err, 'kube-scheduler'),
  );
  if (!real)
    await waitFor('fake nodes Ready', async () => {
      const nodes = await core.listNode();
      return nodeNames.every((n) =>
        nodes.items.some(
          (node) =>
            node.metadata?.name === n &&
            node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ),
      );
    }).catch((err: unknown) => failWith(err, 'kwok'));
  await waitFor('ServiceAccount default/default', async () => {
    await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
    return true;
  }).catch((err: unknown) => failWith(err, 'kube-controller-manager'));

  if (real) {
    await startRealNodeOf(opts, real, {
      kc,
      caPem,
      apiserverPort: ports.apiserver,
      token: tokens.node,
      clusterPodCidr: network.podCidr,
      processes,
    }).catch((err: unknown) => failWith(err, 'real node'));
  }

  const info: ClusterInfo = {
    name: opts.name,
    index: opts.index,
    kubeconfig,
    server,
    dir,
    network,
    nodeNames,
    ports,
    nodes: real ? 'real' : 'fake',
    ...(real ? { realNode: real.plan } : {}),
  };
  return { info, processes, kubeConfig: () => loadKubeconfig(kubeconfig) };
}

/**
 * Starts the cluster's real node, points the `kubernetes` Service at the node's relay and
 * installs CoreDNS; resolves when the node is Ready and CoreDNS answers readiness.
 */
async function startRealNodeOf(
  opts: StartClusterOptions,
  real: RealNodeSetup,
  ctx: {
    kc: KubeConfig;
    caPem: string;
    apiserverPort: number;
    token: string;
    clusterPodCidr: string;
    processes: ProcessRecord[];
  },
): Promise<void> {
  const t0 = Date.now();
  ctx.processes.push(
    ...(await startRealNode({
      plan: real.plan,
      bins: real.bins,
      images: real.images,
      apiserverPort: ctx.apiserverPort,
      caPem: ctx.caPem,
      token: ctx.token,
      clusterPodCidr: ctx.clusterPodCidr,
      detached: opts.detached,
      progress: opts.progress,
    })),
  );
  await waitNodeReady(ctx.kc, real.plan.nodeName);
  opts.progress(`${opts.name}: node ${real.plan.nodeName} Ready after ${Date.now() - t0} ms`);
  await publishApiserverEndpoint(ctx.kc, real.plan.nodeIp, ctx.apiserverPort);
  await installCoreDns(ctx.kc, real.plan.dnsIp);
  await waitCoreDnsReady(ctx.kc);
  opts.progress(`${opts.name}: CoreDNS ready on ${real.plan.dnsIp} after ${Date.now() - t0} ms`);
}

async function createNode(
  core: CoreV1Api,
  name: string,
  network: ClusterNetwork,
  k: number,
): Promise<void> {
  // One range per family, primary first (dual stack: IPv4 then IPv6).
  const podCidrs = network.nodePodCidrs[k]!.split(',');
  const body: V1Node = {
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'kwok',
        'topology.kubernetes.io/region': 'us-east-1',
        'topology.kubernetes.io/zone': `us-east-1${'abcdef'[k % 6]!}`,
        type: 'kwok',
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'kwok.x-k8s.io/node': 'fake',
        'e2e.cloudmap-mcs.io/node-ip': network.nodeIps[k]!,
      },
    },
    spec: { podCIDR: podCidrs[0]!, podCIDRs: podCidrs },
  };
  try {
    await core.createNode({ body });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
  }
}
