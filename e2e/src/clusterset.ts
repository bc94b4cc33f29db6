import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureControlPlaneBinaries } from './binaries.js';
import { startCluster, type ClusterInfo, type StartedCluster } from './cluster.js';
import {
  cloudMapEnv,
  startEmulatorProcess,
  startInProcessEmulator,
  type EmulatorMode,
  type RunningEmulator,
} from './emulator.js';
import { loadKubeconfig } from './kubeconfig.js';
import { silentProgress, type Progress } from './log.js';
import { clusterNetwork, maxClusters, type IpFamilyMode } from './network.js';
import { isPortFree, releasePortClaims } from './ports.js';
import {
  findPidFiles,
  isRunning,
  readPidFile,
  startTicksOf,
  stopProcesses,
  type ProcessRecord,
} from './processes.js';
import { clusterIdProperty, clustersetProperty, setClusterProperty } from './resources.js';
import { ensureNodeBinaries } from './nodes/binaries.js';
import { buildNodeImages } from './nodes/images.js';
import { createFabric, stopRealNodes } from './nodes/node.js';
import { realNodePlan, type RealNodePlan } from './nodes/plan.js';
import { realNodeSupport } from './nodes/prereqs.js';

export interface ClustersetOptions {
  /** Number of clusters, named c1..cN. Default 2. */
  readonly clusters?: number;
  /** Directory for kubeconfigs, logs, data and pid files; created if missing. */
  readonly stateDir: string;
  /** Fake nodes per cluster (1..16). Default 1. */
  readonly nodesPerCluster?: number;
  /** Give every cluster the same pod CIDR (10.1.0.0/16). Default false. */
  readonly overlapPodCidrs?: boolean;
  /** Create the two KEP-2149 ClusterProperties. Default true. */
  readonly clusterProperties?: boolean;
  /** Value of `clusterset.k8s.io` in every cluster. Default `e2e-clusterset`. */
  readonly clustersetName?: string;
  /** 'auto' starts the emulator when it is available; 'required' fails without it. Default 'auto'. */
  readonly emulator?: EmulatorMode;
  /**
   * true: processes get their own session and outlive this process; the emulator runs as a
   * process too (the CLI). false (default): processes are killed if this process exits, and
   * the emulator runs in-process (tests).
   */
  readonly detached?: boolean;
  /**
   * 'fake' (default): kwok's fake nodes, no container runs. 'real': one real node per cluster
   * (kubelet, containerd, kube-proxy, CoreDNS) in its own network namespace, pods of every
   * cluster on one flat network; needs root and the packages of e2e/nodes/packages.sh
   * (installed when missing) and fails, never falls back, when they are not there.
   */
  readonly nodes?: 'fake' | 'real';
  /** Directory with the binaries; default: build or reuse them with e2e/controlplane/build.sh. */
  readonly binDir?: string;
  /** Audit log of every write in each cluster, `<stateDir>/cN/logs/audit.log`. Default false. */
  readonly auditWrites?: boolean;
  /**
   * IP families of every cluster: 'ipv4' (default), 'ipv6' or 'dual' (IPv4 primary), for
   * fake and real nodes. docs/harness.md#ip-families-ip_family.
   */
  readonly ipFamily?: IpFamilyMode;
  readonly progress?: Progress;
}

/** Contents of `<stateDir>/clusterset.json`. */
export interface ClustersetState {
  readonly version: 1;
  readonly stateDir: string;
  readonly clusters: readonly ClusterInfo[];
  readonly clustersetName: string;
  readonly emulator?: {
    readonly url: string;
    readonly port: number;
    /** DNS server for the DNS namespaces (UDP and TCP); absent in state from older runs. */
    readonly dnsPort?: number;
  };
  /** Environment for AWS SDK clients (cloudmap.env), when the emulator runs. */
  readonly cloudMapEnv?: Record<string, string>;
  readonly startedAt: string;
  readonly startMs: number;
}

export interface Clusterset {
  readonly state: ClustersetState;
  readonly clusters: readonly ClusterInfo[];
  readonly emulator?: RunningEmulator;
  /** Stops every process, frees the ports and reports what, if anything, is left. */
  stop(): Promise<TeardownReport>;
}

export interface TeardownReport {
  /** Processes still alive after SIGKILL (normally empty). */
  readonly leftover: readonly ProcessRecord[];
  /** Recorded ports that are still bound on 127.0.0.1 (normally empty). */
  readonly busyPorts: readonly number[];
  /**
   * What real nodes left on the host: processes in their namespaces or cgroups, mounts,
   * network namespaces, cgroups (normally empty; always empty without real nodes).
   */
  readonly hostLeftovers: readonly string[];
}

/** True when a teardown left nothing behind. */
export const teardownClean = (r: TeardownReport): boolean =>
  r.leftover.length === 0 && r.busyPorts.length === 0 && r.hostLeftovers.length === 0;

/** Every leftover of a teardown in one line each. */
export function describeLeftovers(r: TeardownReport): string[] {
  return [
    ...r.leftover.map((p) => `still running: ${p.name} (pid ${p.pid})`),
    ...r.busyPorts.map((p) => `port still bound: 127.0.0.1:${p}`),
    ...r.hostLeftovers,
  ];
}

const stateFile = (stateDir: string): string => join(stateDir, 'clusterset.json');

function envFile(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
}

/**
 * Starts `clusters` local clusters and (when available) one Cloud Map emulator, writes
 * `<stateDir>/cN.kubeconfig`, `<stateDir>/cloudmap.env` and `<stateDir>/clusterset.json`, and
 * resolves once every cluster is ready.
 */
export async function startClusterset(opts: ClustersetOptions): Promise<Clusterset> {
  const t0 = Date.now();
  const progress = opts.progress ?? silentProgress;
  const count = opts.clusters ?? 2;
  if (!Number.isInteger(count) || count < 1 || count > maxClusters) {
    throw new RangeError(`clusters must be 1..${maxClusters}, got ${count}`);
  }
  const stateDir = resolve(opts.stateDir);
  const live = findPidFiles(stateDir)
    .map(readPidFile)
    .filter((r) => r !== undefined && isRunning(r));
  if (live.length > 0) {
    throw new Error(
      `${stateDir} holds a running clusterset; stop it first (make clusterset-down STATE=${stateDir})`,
    );
  }
  // Before removing old files: unmounts what an earlier real-node run may have left.
  await stopRealNodes(stateDir);
  removeOldState(stateDir);
  mkdirSync(stateDir, { recursive: true });
  const real = opts.nodes === 'real';
  const ipFamily = opts.ipFamily ?? 'ipv4';
  if (real) {
    if (opts.overlapPodCidrs === true) {
      throw new Error(
        'real nodes need distinct pod ranges (a flat pod network); drop overlapPodCidrs',
      );
    }
    const support = realNodeSupport(true);
    if (!support.ok) throw new Error(`real nodes requested but cannot start: ${support.reason}`);
  }
  const detached = opts.detached ?? false;
  // Attached processes belong to this process: if it dies without stopping them (a killed
  // test run), reapOrphanedClustersets finds them by this file.
  if (!detached) {
    writeFileSync(ownerFile(stateDir), `${process.pid}\n${startTicksOf(process.pid) ?? ''}\n`);
  }
  const binDir = await ensureControlPlaneBinaries(progress, opts.binDir);
  const realSetup = real ? await prepareRealNodes(stateDir, count, ipFamily, progress) : undefined;

  const started: StartedCluster[] = [];
  let emulator: RunningEmulator | undefined;
  const abort = async (): Promise<void> => {
    await emulator?.stop();
    if (real) await stopRealNodes(stateDir);
    await stopProcesses(
      started.flatMap((c) => [...c.processes].reverse()),
      3_000,
    );
  };
  try {
    const emulatorMode = opts.emulator ?? 'auto';
    // Settled into a result at once, so a failure while the clusters start is not unhandled.
    const emulatorStart = (
      detached
        ? startEmulatorProcess(emulatorMode, stateDir, true, progress)
        : startInProcessEmulator(emulatorMode, progress)
    ).then(
      (e) => ({ ok: true as const, e }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    const results = await Promise.allSettled(
      Array.from({ length: count }, (_, i) =>
        startCluster({
          name: `c${i + 1}`,
          index: i + 1,
          stateDir,
          binDir,
          nodes: opts.nodesPerCluster ?? 1,
          overlapPodCidrs: opts.overlapPodCidrs ?? false,
          detached,
          progress,
          auditWrites: opts.auditWrites ?? false,
          ...(ipFamily !== 'ipv4' ? { ipFamily } : {}),
          ...(realSetup !== undefined
            ? { realNode: { ...realSetup, plan: realSetup.plans[i]! } }
            : {}),
        }).then((c) => {
          started.push(c);
          progress(`${c.info.name}: ready (${c.info.server})`);
          return c;
        }),
      ),
    );
    const emulatorResult = await emulatorStart;
    if (emulatorResult.ok) emulator = emulatorResult.e;
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (!emulatorResult.ok)
      throw new Error('Cloud Map emulator failed to start', { cause: emulatorResult.err });

    const clustersetName = opts.clustersetName ?? 'e2e-clusterset';
    started.sort((a, b) => a.info.index - b.info.index);
    if (opts.clusterProperties ?? true) {
      for (const c of started) {
        const kc = loadKubeconfig(c.info.kubeconfig);
        await setClusterProperty(kc, clusterIdProperty, c.info.name);
        await setClusterProperty(kc, clustersetProperty, clustersetName);
      }
    }
    const env = emulator !== undefined ? cloudMapEnv(emulator.url, emulator.dnsAddress) : undefined;
    if (env !== undefined) writeFileSync(join(stateDir, 'cloudmap.env'), envFile(env));
    else rmSync(join(stateDir, 'cloudmap.env'), { force: true });
    const state: ClustersetState = {
      version: 1,
      stateDir,
      clusters: started.map((c) => c.info),
      clustersetName,
      ...(emulator !== undefined
        ? { emulator: { url: emulator.url, port: emulator.port, dnsPort: emulator.dnsPort } }
        : {}),
      ...(env !== undefined ? { cloudMapEnv: env } : {}),
      startedAt: new Date(t0).toISOString(),
      startMs: Date.now() - t0,
    };
    writeFileSync(stateFile(stateDir), `${JSON.stringify(state, null, 2)}\n`);
    progress(`clusterset ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const inProcessEmulator = emulator?.process === undefined ? emulator : undefined;
    return {
      state,
      clusters: state.clusters,
      ...(emulator !== undefined ? { emulator } : {}),
      stop: async () => {
        await inProcessEmulator?.stop();
        return stopClusterset(stateDir);
      },
    };
  } catch (err) {
    await abort();
    throw err;
  }
}

/**
 * Builds (or reuses) the node binaries, builds the images into `<stateDir>/images`, plans
 * every cluster's node and creates the clusterset's fabric namespace.
 */
async function prepareRealNodes(
  stateDir: string,
  count: number,
  ipFamily: IpFamilyMode,
  progress: (msg: string) => void,
): Promise<{
  bins: Awaited<ReturnType<typeof ensureNodeBinaries>>;
  images: string[];
  plans: RealNodePlan[];
}> {
  const t0 = Date.now();
  const bins = await ensureNodeBinaries(progress);
  const images = buildNodeImages(bins, join(stateDir, 'images')).map((i) => i.archive);
  progress(`real nodes: ${images.length} images built in ${Date.now() - t0} ms`);
  const clusters = Array.from({ length: count }, (_, i) => {
    const net = clusterNetwork(i + 1, 1, false, ipFamily);
    // A real dual-stack node has an address of each family (fake ones keep the IPv4 one).
    const nodeIps =
      ipFamily === 'dual'
        ? [net.nodeIps[0]!, clusterNetwork(i + 1, 1, false, 'ipv6').nodeIps[0]!]
        : [net.nodeIps[0]!];
    return {
      name: `c${i + 1}`,
      index: i + 1,
      nodeIps,
      nodePodCidrs: net.nodePodCidrs[0]!.split(','),
      serviceCidr: net.serviceCidr,
    };
  });
  const plans = clusters.map((c) => realNodePlan(stateDir, c, clusters));
  createFabric(plans[0]!.fabricNetns);
  return { bins, images, plans };
}

/** Removes what an earlier, stopped clusterset left in `stateDir` (only files the harness writes). */
function removeOldState(stateDir: string): void {
  if (!existsSync(stateDir)) return;
  for (const entry of readdirSync(stateDir, { withFileTypes: true })) {
    const path = join(stateDir, entry.name);
    const ours =
      (entry.isDirectory() &&
        /^(c\d+|emulator)$/.test(entry.name) &&
        existsSync(join(path, 'pids'))) ||
      (entry.isDirectory() && entry.name === 'images') ||
      (entry.isFile() && /^(c\d+\.kubeconfig|cloudmap\.env|clusterset\.json)$/.test(entry.name));
    if (ours) rmSync(path, { recursive: true, force: true });
  }
}

// Not named *.pid: stopClusterset signals every pid file under the state dir, and the owner
// is the test runner itself.
const ownerFile = (stateDir: string): string => join(stateDir, 'owner.process');

/**
 * Stops and removes clustersets under `parent` whose directory name starts with `prefix` and
 * whose owning process (attached mode) is gone, e.g. after a test run was killed. Returns
 * the directories it cleaned.
 */
export async function reapOrphanedClustersets(parent: string, prefix: string): Promise<string[]> {
  const reaped: string[] = [];
  if (!existsSync(parent)) return reaped;
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith(prefix)) continue;
    const dir = join(parent, entry.name);
    if (!existsSync(ownerFile(dir))) continue;
    const [pid, startTicks] = readFileSync(ownerFile(dir), 'utf8').split('\n');
    if (isRunning({ pid: Number(pid), startTicks: startTicks ?? '' })) continue;
    await stopClusterset(dir);
    rmSync(dir, { recursive: true, force: true });
    reaped.push(dir);
  }
  return reaped;
}

/** Reads `<stateDir>/clusterset.json` written by startClusterset. */
export function loadClusterset(stateDir: string): ClustersetState {
  const file = stateFile(resolve(stateDir));
  if (!existsSync(file)) throw new Error(`no clusterset in ${stateDir} (${file} missing)`);
  return JSON.parse(readFileSync(file, 'utf8')) as ClustersetState;
}

function recordedPorts(stateDir: string): number[] {
  if (!existsSync(stateFile(stateDir))) return [];
  const state = loadClusterset(stateDir);
  return [
    ...state.clusters.flatMap((c) => Object.values(c.ports)),
    ...(state.emulator !== undefined ? [state.emulator.port] : []),
    ...(state.emulator?.dnsPort !== undefined ? [state.emulator.dnsPort] : []),
  ];
}

/** Kill order: the API server's clients first, then the API server, the store last. */
const stages = [
  ['kwok', 'kube-scheduler', 'kube-controller-manager'],
  ['kube-apiserver'],
  ['etcd'],
  ['cloudmap-emulator'],
];
const rank = (r: ProcessRecord): number => {
  const base = r.name.slice(r.name.lastIndexOf('/') + 1);
  const i = stages.findIndex((names) => names.includes(base));
  return i < 0 ? 0 : i;
};

/**
 * Stops every process recorded under `stateDir` (pid files, checked against the process
 * start time so a reused pid is never signalled), then checks the recorded ports are free.
 * Safe to call twice, and on a half-started clusterset.
 */
export async function stopClusterset(stateDir: string): Promise<TeardownReport> {
  const dir = resolve(stateDir);
  const ports = recordedPorts(dir);
  // Real nodes first: their teardown needs no API server, and it unmounts before files go.
  const nodes = await stopRealNodes(dir);
  const hostLeftovers = [
    ...nodes.processes.map((p) => `process in a real node's namespace or cgroup: pid ${p}`),
    ...nodes.mounts.map((m) => `still mounted: ${m}`),
    ...nodes.netns.map((n) => `network namespace left: ${n}`),
    ...nodes.cgroups.map((c) => `cgroup left: ${c}`),
  ];
  const records = findPidFiles(dir)
    .map(readPidFile)
    .filter((r): r is ProcessRecord => r !== undefined);
  const leftover: ProcessRecord[] = [];
  for (const stage of [...new Set(records.map(rank))].sort((a, b) => a - b)) {
    leftover.push(...(await stopProcesses(records.filter((r) => rank(r) === stage))));
  }
  const busyPorts: number[] = [];
  for (const port of ports) if (!(await isPortFree(port))) busyPorts.push(port);
  releasePortClaims(ports);
  return { leftover, busyPorts, hostLeftovers };
}
