/**
 * The two benchmarked sides, started as real processes in every cluster:
 * - ours: export agent + import agent per cluster, at their documented production defaults
 *   (only connection, identity and port flags are given; leader election stays on);
 * - peer: the AWS Cloud Map MCS controller v0.3.x (Go), one process per cluster, built from
 *   the Go module proxy by e2e/peer/build.sh, reaching the emulator through gateway mode.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentEnvironment } from '../agent-bundle.js';
import type { ClusterInfo } from '../cluster.js';
import { agentNodeArgsOf, tail } from '../demo/agents.js';
import { loadKubeconfig } from '../kubeconfig.js';
import { repoRoot } from '../paths.js';
import { allocatePorts, releasePortClaims } from '../ports.js';
import { isRunning, spawnProcess, stopProcesses, type ProcessRecord } from '../processes.js';
import type { BenchEmulator } from './gateway-emulator.js';
import { identityKubeconfig, type ProcessKind } from './identities.js';

export type Side = 'ours' | 'peer';

export interface BenchProcess {
  readonly kind: ProcessKind;
  readonly cluster: string;
  readonly logFile: string;
  readonly record: ProcessRecord;
  /** Our import agents' /metrics (ours only). */
  readonly metricsUrl?: string;
}

export const kindsOf = (side: Side): ProcessKind[] =>
  side === 'ours' ? ['export-agent', 'import-agent'] : ['aws-controller'];

const run = promisify(execFile);

/** Builds (or reuses from ~/.cache/cloudmap-mcs) the AWS controller; returns the binary. */
export async function peerBinary(): Promise<string> {
  const script = join(repoRoot(), 'e2e', 'peer', 'build.sh');
  const { stdout } = await run(script, [], { maxBuffer: 1 << 20 });
  const bin = stdout.trim().split('\n').at(-1) ?? '';
  if (!existsSync(bin)) throw new Error(`${script} printed no binary path (got "${bin}")`);
  return bin;
}

function oursArgs(kind: ProcessKind, port: number): string[] {
  // Bound to 127.0.0.1: a server a test starts listens on loopback only.
  const common = [`--health-port=${port}`, '--bind-address=127.0.0.1'];
  if (kind === 'export-agent') return common;
  return [...common, `--metrics-port=${port}`];
}

/**
 * The AWS controller's environment: its SDK ignores AWS_ENDPOINT_URL*, so it goes through
 * the gateway; both CA variables point at the gateway CA because the Go SDK prefers
 * AWS_CA_BUNDLE (which this machine may export) over SSL_CERT_FILE.
 */
function peerEnv(kubeconfig: string, emu: BenchEmulator, caller: string): Record<string, string> {
  return {
    KUBECONFIG: kubeconfig,
    HTTPS_PROXY: emu.proxyUrl,
    https_proxy: emu.proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    SSL_CERT_FILE: emu.caFile,
    AWS_CA_BUNDLE: emu.caFile,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: caller,
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/**
 * The access key id each process signs its Cloud Map calls with: the emulator counts calls
 * per key id, so the report can say what one cluster, or one importing process, costs.
 */
export const cloudMapCallerOf = (cluster: string, kind: ProcessKind): string =>
  `${cluster}-${kind}`;

/** Our agent's environment: its cluster, the emulator, and its replica name (the downward API's). */
const oursEnv = (
  caller: string,
  kubeconfig: string,
  emu: BenchEmulator,
  podName: string,
): Record<string, string> => ({
  ...agentEnvironment,
  KUBECONFIG: kubeconfig,
  AWS_ENDPOINT_URL_SERVICEDISCOVERY: emu.url,
  POD_NAME: podName,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: caller,
  AWS_SECRET_ACCESS_KEY: 'test',
});

/** What starting a side needs of a cluster (the bench's clusters, or a test's harness ones). */
export type SideCluster = Pick<ClusterInfo, 'name' | 'dir' | 'kubeconfig'>;

const benchDir = (cluster: SideCluster): string => join(cluster.dir, 'bench');

/** Spawns one process with its identity's kubeconfig. */
async function startOne(
  side: Side,
  kind: ProcessKind,
  cluster: SideCluster,
  kubeconfig: string,
  emu: BenchEmulator,
  peerBin: string | undefined,
): Promise<BenchProcess> {
  const dir = benchDir(cluster);
  mkdirSync(join(dir, 'pids'), { recursive: true });
  const logFile = join(dir, `${kind}.log`);
  const pidFile = join(dir, 'pids', `${kind}.pid`);
  if (side === 'peer') {
    const record = spawnProcess({
      name: `${cluster.name}/${kind}`,
      command: peerBin!,
      // Metrics and probes off ("0"): nothing scrapes them and fixed ports would collide.
      args: ['--metrics-bind-address=0', '--health-probe-bind-address=0'],
      logFile,
      pidFile,
      env: peerEnv(kubeconfig, emu, cloudMapCallerOf(cluster.name, kind)),
      cwd: dir,
      detached: false,
    });
    return { kind, cluster: cluster.name, logFile, record };
  }
  const [port] = await allocatePorts(1, `bench ${cluster.name} ${kind}`);
  const record = spawnProcess({
    name: `${cluster.name}/${kind}`,
    command: process.execPath,
    args: [
      ...agentNodeArgsOf(kind === 'export-agent' ? 'export' : 'import'),
      ...oursArgs(kind, port!),
    ],
    logFile,
    pidFile,
    env: oursEnv(cloudMapCallerOf(cluster.name, kind), kubeconfig, emu, `${cluster.name}-${kind}`),
    cwd: repoRoot(),
    detached: false,
  });
  releasePortClaims([port!]);
  return {
    kind,
    cluster: cluster.name,
    logFile,
    record,
    ...(kind === 'import-agent' ? { metricsUrl: `http://127.0.0.1:${port!}/metrics` } : {}),
  };
}

/** Starts the side in every cluster; resolves with the processes and the start time. */
export async function startSide(
  side: Side,
  clusters: readonly SideCluster[],
  emu: BenchEmulator,
): Promise<{ processes: BenchProcess[]; startedAtMs: number }> {
  const peerBin = side === 'peer' ? await peerBinary() : undefined;
  // Identities first, so the clock starts when the processes do.
  const kubeconfigs = new Map<string, string>();
  for (const cluster of clusters)
    for (const kind of kindsOf(side))
      kubeconfigs.set(
        `${cluster.name}/${kind}`,
        await identityKubeconfig(loadKubeconfig(cluster.kubeconfig), kind, benchDir(cluster)),
      );
  const startedAtMs = Date.now();
  const processes: BenchProcess[] = [];
  try {
    for (const cluster of clusters)
      for (const kind of kindsOf(side)) {
        const kubeconfig = kubeconfigs.get(`${cluster.name}/${kind}`)!;
        processes.push(await startOne(side, kind, cluster, kubeconfig, emu, peerBin));
      }
  } catch (err) {
    await stopSide(processes);
    throw err;
  }
  return { processes, startedAtMs };
}

/** Throws, with the log tail, when any process of the side has exited. */
export function assertAlive(processes: readonly BenchProcess[]): void {
  for (const p of processes)
    if (!isRunning(p.record))
      throw new Error(
        `${p.cluster} ${p.kind} exited; last log lines of ${p.logFile}:\n${tail(p.logFile)}`,
      );
}

export async function stopSide(processes: readonly BenchProcess[]): Promise<void> {
  await stopProcesses(
    processes.map((p) => p.record),
    10_000,
  );
}
