/**
 * Runs the two agents of one cluster as real processes (their bundles, e2e/src/agent-bundle.ts),
 * recorded with pid files under the cluster's state directory so the harness teardown stops
 * them first, before the API server they talk to.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentEnvironment, agentNodeArgs } from '../agent-bundle.js';
import { repoRoot } from '../paths.js';
import type { ClusterInfo } from '../cluster.js';
import { allocatePorts, releasePortClaims } from '../ports.js';
import { isRunning, spawnProcess, stopProcesses, type ProcessRecord } from '../processes.js';
import { waitFor } from '../wait.js';

export type AgentKind = 'export' | 'import';

export interface RunningAgent {
  readonly kind: AgentKind;
  readonly cluster: string;
  readonly healthUrl: string;
  readonly logFile: string;
  readonly process: ProcessRecord;
}

/** The `node` arguments that start the agent (its bundle, source maps on); flags follow. */
export const agentNodeArgsOf = (kind: AgentKind): string[] => agentNodeArgs(`${kind}-agent`);

/**
 * Flags of each agent for a local demo: short periods so changes show within seconds. The
 * cluster and Cloud Map come from the environment (startAgent: KUBECONFIG, the emulator's
 * AWS_* variables), the rest from demoAgentEnv.
 */
export function agentArgs(kind: AgentKind, ports: { health: number; metrics: number }): string[] {
  const common = [`--health-port=${ports.health}`, '--leader-elect=false', '--log-level=info'];
  if (kind === 'export')
    return [
      ...common,
      // The demo namespace becomes a private DNS namespace: hello.demo resolves through the
      // emulator's DNS (docs/dns-namespaces.md). The emulator accepts any VPC id.
      '--dns-records',
      '--dns-ttl=5',
      '--dns-namespace-vpc=vpc-demo',
    ];
  return [
    ...common,
    `--metrics-port=${ports.metrics}`,
    '--bind-address=127.0.0.1',
    '--poll-fast-seconds=1',
  ];
}

/**
 * The demo agents' environment beyond the cluster and Cloud Map: the replica's name, as the
 * downward API gives it in a Pod, and the demo's short internal periods (test-only timings,
 * docs/contributing.md#test-timings).
 */
export function demoAgentEnv(
  kind: AgentKind,
  cluster: Pick<ClusterInfo, 'name'>,
): Record<string, string> {
  const timings = kind === 'export' ? { heartbeatSeconds: 10 } : { pollSlowSeconds: 3 };
  return {
    POD_NAME: `${cluster.name}-${kind}-agent`,
    MCS_TEST_TIMINGS: JSON.stringify(timings),
  };
}

/** The last lines of a log, for error messages. */
export function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
    .join('\n');
}

async function readyz(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export type AgentArgs = (ports: { health: number; metrics: number }) => string[];

/**
 * Starts one agent on `cluster` (KUBECONFIG) with the Cloud Map `env`, and resolves once its
 * /readyz answers 200. `argsFor` gives its flags for the two free ports picked here and
 * `extraEnv` its further variables (default: the demo's, agentArgs and demoAgentEnv).
 */
export async function startAgent(
  kind: AgentKind,
  cluster: ClusterInfo,
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
  argsFor: AgentArgs = (ports) => agentArgs(kind, ports),
  extraEnv: Readonly<Record<string, string>> = demoAgentEnv(kind, cluster),
): Promise<RunningAgent> {
  const node = agentNodeArgsOf(kind);
  const [health = 0, metrics = 0] = await allocatePorts(2, `${cluster.name} ${kind}-agent`);
  const logs = join(cluster.dir, 'logs');
  const pids = join(cluster.dir, 'pids');
  mkdirSync(logs, { recursive: true });
  mkdirSync(pids, { recursive: true });
  const logFile = join(logs, `${kind}-agent.log`);
  const record = spawnProcess({
    name: `${kind}-agent`,
    command: process.execPath,
    args: [...node, ...argsFor({ health, metrics })],
    logFile,
    pidFile: join(pids, `${kind}-agent.pid`),
    env: { ...agentEnvironment, ...env, KUBECONFIG: cluster.kubeconfig, ...extraEnv },
    cwd: repoRoot(),
    detached: false,
  });
  const healthUrl = `http://127.0.0.1:${health}`;
  try {
    const outcome = await waitFor(
      `${cluster.name} ${kind} agent ready (${healthUrl}/readyz)`,
      async () => (isRunning(record) ? readyz(healthUrl) : 'exited'),
      { timeoutMs, intervalMs: 250 },
    );
    if (outcome === 'exited')
      throw new Error(
        `the ${cluster.name} ${kind} agent exited during start-up; last log lines:\n${tail(logFile)}`,
      );
  } catch (err) {
    await stopProcesses([record], 2_000);
    if (err instanceof Error && err.message.includes('exited during start-up')) throw err;
    throw new Error(
      `the ${cluster.name} ${kind} agent was not ready after ${timeoutMs / 1000} s; last log lines:\n${tail(logFile)}`,
      { cause: err },
    );
  } finally {
    releasePortClaims([health, metrics]);
  }
  return { kind, cluster: cluster.name, healthUrl, logFile, process: record };
}
