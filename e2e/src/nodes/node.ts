import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { writeKubeconfig } from '../kubeconfig.js';
import type { Progress } from '../log.js';
import {
  findPidFiles,
  readPidFile,
  spawnProcess,
  stopProcesses,
  type ProcessRecord,
} from '../processes.js';
import { waitFor } from '../wait.js';
import type { NodeBinaries } from './binaries.js';
import { cniConflist, containerdConfig, kubeletConfig, kubeProxyConfig } from './configs.js';
import {
  addNetns,
  createCgroupRoot,
  deleteNetns,
  ipIn,
  killAll,
  listNetns,
  netnsPath,
  netnsSysctl,
  processesInCgroup,
  processesInNetns,
  removeCgroupRoot,
  run,
  unmountUnder,
} from './host.js';
import { nodeImageRefs } from './images.js';
import { netnsPrefix, type RealNodePlan } from './plan.js';
import { recordSysctls, restoreSysctls } from './sysctls.js';

export interface StartRealNodeOptions {
  readonly plan: RealNodePlan;
  readonly bins: NodeBinaries;
  /** OCI archives to import into the node's containerd. */
  readonly images: readonly string[];
  readonly apiserverPort: number;
  readonly caPem: string;
  /** Bearer token of the kubelet and kube-proxy. */
  readonly token: string;
  /** The cluster's whole pod range (kube-proxy's clusterCIDR). */
  readonly clusterPodCidr: string;
  readonly detached: boolean;
  readonly progress: Progress;
}

export interface NodeFiles {
  readonly dir: string;
  readonly pids: string;
  readonly logs: string;
  readonly containerdSocket: string;
  /** Unix socket of the node's HTTP CONNECT proxy (the API server's egress to the node). */
  readonly egressSocket: string;
  /** Unix socket on the host side of the node's relay to the API server. */
  readonly apiSocket: string;
}

/** Short names: Unix socket paths are limited to 107 bytes. */
export function nodeFiles(dir: string): NodeFiles {
  return {
    dir,
    pids: join(dir, 'pids'),
    logs: join(dir, 'logs'),
    containerdSocket: join(dir, 'ctrd.sock'),
    egressSocket: join(dir, 'egress.sock'),
    apiSocket: join(dir, 'api.sock'),
  };
}

/**
 * The longest Unix sockets under a node directory (the kubelet's device-plugin and
 * pod-resources sockets) must fit the kernel's 107-byte limit; a clear error beats a kubelet
 * that exits with `bind: invalid argument`.
 */
export function checkSocketPaths(dir: string): void {
  const longest = join(dir, 'kubelet', 'pod-resources', 'kubelet.sock');
  if (Buffer.byteLength(longest) > 107) {
    throw new Error(
      `real nodes: the state directory path is too long for Unix sockets (${longest} is ${Buffer.byteLength(longest)} bytes, the limit is 107); use a shorter state directory`,
    );
  }
}

/** Creates the node's network namespace, its link to the fabric, its address and routes. */
function setUpNetwork(plan: RealNodePlan): void {
  addNetns(plan.netns);
  ipIn(
    plan.fabricNetns,
    'link',
    'add',
    plan.fabricLink,
    'type',
    'veth',
    'peer',
    'name',
    'eth0',
    'netns',
    plan.netns,
  );
  ipIn(plan.fabricNetns, 'link', 'set', plan.fabricLink, 'master', 'fabric0', 'up');
  const ipv6 = plan.nodeIps.some((ip) => ip.includes(':'));
  if (ipv6) netnsSysctl(plan.netns, 'net.ipv6.conf.all.disable_ipv6', '0');
  for (const a of plan.fabricAddresses) {
    // nodad: no duplicate-address detection on a link the harness alone numbers, so the
    // address is usable at once (a tentative one cannot be bound for a second or two).
    ipIn(plan.netns, 'addr', 'add', a, 'dev', 'eth0', ...(a.includes(':') ? ['nodad'] : []));
  }
  ipIn(plan.netns, 'link', 'set', 'eth0', 'up');
  for (const r of plan.routes) ipIn(plan.netns, 'route', 'add', r.dst, 'via', r.via);
  // The node routes between its pods and the fabric; these are the namespace's own sysctls.
  netnsSysctl(plan.netns, 'net.ipv4.ip_forward', '1');
  netnsSysctl(plan.netns, 'net.ipv4.conf.all.rp_filter', '0');
  netnsSysctl(plan.netns, 'net.ipv4.conf.default.rp_filter', '0');
  if (ipv6) netnsSysctl(plan.netns, 'net.ipv6.conf.all.forwarding', '1');
}

/** The clusterset's fabric: one namespace with one bridge, every node's eth0 attached. */
export function createFabric(fabricNetns: string): void {
  addNetns(fabricNetns);
  ipIn(fabricNetns, 'link', 'add', 'fabric0', 'type', 'bridge');
  ipIn(fabricNetns, 'link', 'set', 'fabric0', 'up');
}

/**
 * Starts one real node: containerd, kubelet and kube-proxy in the node's own network
 * namespace, the relay that lets them (and pods, through the `kubernetes` Service) reach the
 * API server on the host's 127.0.0.1, and the CONNECT proxy the API server uses to reach the
 * kubelet. Resolves when the Node is Ready. On failure the caller tears down (stopRealNodes).
 */
export async function startRealNode(opts: StartRealNodeOptions): Promise<ProcessRecord[]> {
  const { plan, bins } = opts;
  checkSocketPaths(plan.dir);
  const f = nodeFiles(plan.dir);
  for (const d of [f.dir, f.pids, f.logs]) mkdirSync(d, { recursive: true, mode: 0o700 });
  writeFileSync(join(f.dir, 'node.json'), `${JSON.stringify(plan, null, 2)}\n`);
  const processes: ProcessRecord[] = [];
  const start = (name: string, command: string, args: string[], inNode: boolean): ProcessRecord => {
    const record = spawnProcess({
      name: `${plan.cluster}/${name}`,
      command: inNode ? 'nsenter' : command,
      args: inNode ? [`--net=${netnsPath(plan.netns)}`, '--', command, ...args] : args,
      logFile: join(f.logs, `${name}.log`),
      pidFile: join(f.pids, `${name}.pid`),
      detached: opts.detached,
      cwd: f.dir,
    });
    processes.push(record);
    return record;
  };

  setUpNetwork(plan);
  createCgroupRoot(plan.cgroupRoot);

  // API server relay: node namespace TCP :port -> host Unix socket -> host 127.0.0.1:port.
  start(
    'api-relay-host',
    'socat',
    [
      `UNIX-LISTEN:${f.apiSocket},fork,unlink-early,mode=600`,
      `TCP:127.0.0.1:${opts.apiserverPort}`,
    ],
    false,
  );
  // Pods reach it at the node IP (IPv6 on an IPv6-only node: listen on both families there).
  const listen = plan.nodeIp.includes(':')
    ? `TCP6-LISTEN:${opts.apiserverPort},ipv6only=0`
    : `TCP-LISTEN:${opts.apiserverPort}`;
  start(
    'api-relay-node',
    'socat',
    [`${listen},fork,reuseaddr`, `UNIX-CONNECT:${f.apiSocket}`],
    true,
  );
  start('connect-proxy', bins['connect-proxy'], [f.egressSocket], true);

  // containerd with its own root, state and socket.
  const paths = {
    containerdRoot: join(f.dir, 'containerd', 'root'),
    containerdState: join(f.dir, 'containerd', 'state'),
    containerdSocket: f.containerdSocket,
    cniConfDir: join(f.dir, 'cni', 'conf'),
    cniIpamDir: join(f.dir, 'cni', 'ipam'),
    cniBinDir: '/usr/lib/cni',
    runc: '/usr/sbin/runc',
  };
  mkdirSync(paths.cniConfDir, { recursive: true });
  writeFileSync(
    join(paths.cniConfDir, '10-mcs-pods.conflist'),
    cniConflist(plan, paths.cniIpamDir),
  );
  const containerdToml = join(f.dir, 'containerd.toml');
  writeFileSync(containerdToml, containerdConfig(paths, nodeImageRefs.pause));
  start('containerd', 'containerd', ['--config', containerdToml], true);
  await waitFor(`${plan.nodeName}: containerd socket`, () => existsSync(f.containerdSocket), {
    timeoutMs: 30_000,
  });
  for (const archive of opts.images) {
    run('ctr', ['--address', f.containerdSocket, '-n', 'k8s.io', 'images', 'import', archive]);
  }
  opts.progress(`${plan.cluster}: containerd ready, ${opts.images.length} images imported`);

  // kubelet and kube-proxy talk to the API server through the relay, inside the namespace.
  const server = `https://127.0.0.1:${opts.apiserverPort}`;
  const kubeconfig = join(f.dir, 'node.kubeconfig');
  writeKubeconfig(kubeconfig, {
    name: plan.cluster,
    server,
    caPem: opts.caPem,
    user: plan.nodeName,
    token: opts.token,
  });
  const resolvConf = join(f.dir, 'resolv.conf');
  // Pods with dnsPolicy Default (CoreDNS's upstream) get this: an unroutable TEST-NET
  // resolver, so no query ever leaves the clusterset.
  writeFileSync(resolvConf, 'nameserver 192.0.2.53\n');
  recordSysctls();
  const kubeletYaml = join(f.dir, 'kubelet.yaml');
  writeFileSync(
    kubeletYaml,
    kubeletConfig(plan, { containerdSocket: f.containerdSocket, resolvConf }),
  );
  start(
    'kubelet',
    bins.kubelet,
    [
      `--config=${kubeletYaml}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(f.dir, 'kubelet')}`,
      `--hostname-override=${plan.nodeName}`,
      `--node-ip=${plan.nodeIps.join(',')}`,
      `--node-labels=type=real,topology.kubernetes.io/region=us-east-1,topology.kubernetes.io/zone=us-east-1a`,
      '--v=1',
    ],
    true,
  );
  const kubeProxyYaml = join(f.dir, 'kube-proxy.yaml');
  writeFileSync(kubeProxyYaml, kubeProxyConfig(plan, kubeconfig, opts.clusterPodCidr));
  start('kube-proxy', bins['kube-proxy'], [`--config=${kubeProxyYaml}`, '--v=1'], true);
  return processes;
}

/** Waits until the node is registered and Ready. */
export async function waitNodeReady(
  kc: KubeConfig,
  nodeName: string,
  timeoutMs = 120_000,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await waitFor(
    `node ${nodeName} Ready`,
    async () => {
      const node = await core.readNode({ name: nodeName });
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    },
    { timeoutMs, intervalMs: 300 },
  );
}

/** What a real-node teardown could not remove (all empty normally). */
export interface NodeTeardownReport {
  readonly processes: number[];
  readonly mounts: string[];
  readonly netns: string[];
  readonly cgroups: string[];
}

/** Node directories of a clusterset: `<stateDir>/cN/node` holding a node.json. */
function nodeDirs(stateDir: string): string[] {
  if (!existsSync(stateDir)) return [];
  return readdirSync(stateDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^c\d+$/.test(e.name))
    .map((e) => join(stateDir, e.name, 'node'))
    .filter((d) => existsSync(join(d, 'node.json')));
}

function cgroupRoots(prefix: string): string[] {
  const base = existsSync('/sys/fs/cgroup/pids') ? '/sys/fs/cgroup/pids' : '/sys/fs/cgroup';
  return existsSync(base) ? readdirSync(base).filter((n) => n.startsWith(prefix)) : [];
}

/**
 * Stops every real node of the clusterset in `stateDir` and removes what they made: the
 * containers (through containerd while it still runs), every process in the nodes' cgroups
 * or network namespaces, the mounts under the node directories, the namespaces (which takes
 * the veths, bridges, routes and nftables rules inside them along) and the cgroups. Safe to
 * call twice and on a half-started clusterset; works from pid files and names alone.
 */
export async function stopRealNodes(stateDir: string): Promise<NodeTeardownReport> {
  const prefix = netnsPrefix(stateDir);
  const dirs = nodeDirs(stateDir);
  const records = dirs.flatMap((d) =>
    findPidFiles(join(d, 'pids'))
      .map(readPidFile)
      .filter((r): r is ProcessRecord => r !== undefined),
  );
  const named = (...names: string[]) =>
    records.filter((r) => names.includes(r.name.slice(r.name.lastIndexOf('/') + 1)));
  await stopProcesses(named('kubelet', 'kube-proxy'), 5_000);
  for (const d of dirs) killContainers(nodeFiles(d).containerdSocket);
  await stopProcesses(records, 5_000);

  const netns = listNetns(prefix);
  const roots = cgroupRoots(prefix);
  const processes = await killAll(() => [
    ...new Set([...netns.flatMap(processesInNetns), ...roots.flatMap(processesInCgroup)]),
  ]);
  const mounts = dirs.flatMap(unmountUnder);
  const leftNetns: string[] = [];
  for (const n of netns) {
    try {
      deleteNetns(n);
    } catch {
      leftNetns.push(n);
    }
  }
  const cgroups = roots.flatMap(removeCgroupRoot);
  if (dirs.length > 0) restoreSysctls();
  return {
    processes,
    mounts,
    netns: [...leftNetns, ...listNetns(prefix).filter((n) => !leftNetns.includes(n))],
    cgroups,
  };
}

/** Kills and deletes every container task of the node's containerd, so the shims exit cleanly. */
function killContainers(socket: string): void {
  if (!existsSync(socket)) return;
  const ctr = (...args: string[]): string =>
    run('ctr', ['--address', socket, '-n', 'k8s.io', ...args]);
  try {
    const tasks = ctr('tasks', 'ls', '-q')
      .split('\n')
      .filter((t) => t.trim() !== '');
    for (const t of tasks) {
      try {
        ctr('tasks', 'kill', '-s', 'SIGKILL', t);
      } catch {
        // already stopped
      }
    }
    for (const t of tasks) {
      try {
        ctr('tasks', 'delete', '-f', t);
      } catch {
        // gone
      }
    }
  } catch {
    // containerd not answering: the processes are killed through the cgroups below
  }
}

export function readPlan(dir: string): RealNodePlan {
  return JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as RealNodePlan;
}
