/**
 * The production wire path: the agents run as they do on EKS — no endpoint override, the
 * region's AWS host names, TLS, the SDK's standard credential chain (here its environment
 * variables), DiscoverInstances* on the `data-` host — and reach the Cloud Map emulator
 * through its gateway with only what a user behind a proxy sets: NODE_USE_ENV_PROXY=1,
 * HTTPS_PROXY, NO_PROXY and the CA bundle (NODE_EXTRA_CA_CERTS). docs/cloudmap-emulator.md.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import { agentEnvironment, agentNodeArgs } from './agent-bundle.js';
import { tail } from './demo/agents.js';
import { repoRoot } from './paths.js';
import { allocatePorts, releasePortClaims } from './ports.js';
import { isRunning, spawnProcess, stopProcesses, type ProcessRecord } from './processes.js';
import { waitFor } from './wait.js';

/** The region the wire-path agents run in: its hosts are the ones the gateway sees. */
export const wirePathRegion = 'us-west-2';

export interface WirePathEmulator {
  readonly admin: EmulatorAdminClient;
  /** The agents' Cloud Map environment: proxy, CA bundle, region, credentials; no endpoint. */
  readonly env: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** An emulator of its own (this process) with its gateway, for the wire-path agents. */
export async function startWirePathEmulator(): Promise<WirePathEmulator> {
  const emu = await startEmulator({ port: 0, gatewayPort: 0, region: wirePathRegion });
  const gateway = emu.gateway!;
  return {
    admin: emu.admin,
    env: {
      AWS_REGION: wirePathRegion,
      AWS_ACCESS_KEY_ID: 'wire-path',
      AWS_SECRET_ACCESS_KEY: 'test',
      // Node's own proxy switch; the agents' SDK clients follow it (sdk-client.ts).
      NODE_USE_ENV_PROXY: '1',
      HTTPS_PROXY: gateway.url,
      // The API servers (and, on EKS, the pod identity/IMDS addresses) are reached directly.
      NO_PROXY: '127.0.0.1,localhost',
      NODE_EXTRA_CA_CERTS: gateway.caFile,
    },
    stop: () => emu.stop(),
  };
}

export interface WirePathAgent {
  readonly logFile: string;
  readonly process: ProcessRecord;
  stop(): Promise<void>;
}

/**
 * One agent on the cluster of `kubeconfig`, with `env` and nothing inherited from the test
 * runner (no stray AWS_ENDPOINT_URL_* or MCS_* variable), ready once /readyz answers 200.
 */
export async function startWirePathAgent(
  kind: 'export' | 'import',
  cluster: { name: string; kubeconfig: string },
  env: Readonly<Record<string, string>>,
): Promise<WirePathAgent> {
  const dir = mkdtempSync(join(tmpdir(), `cloudmap-mcs-wire-${cluster.name}-${kind}-`));
  mkdirSync(dir, { recursive: true });
  const [health = 0, metrics = 0] = await allocatePorts(2, `${cluster.name} ${kind}-agent`);
  const logFile = join(dir, `${kind}-agent.log`);
  const flags = [
    `--health-port=${String(health)}`,
    '--bind-address=127.0.0.1',
    '--leader-elect=false',
    ...(kind === 'import' ? [`--metrics-port=${String(metrics)}`, '--poll-fast-seconds=1'] : []),
  ];
  const timings = kind === 'export' ? { heartbeatSeconds: 10 } : { pollSlowSeconds: 2 };
  const record = spawnProcess({
    name: `${kind}-agent`,
    command: process.execPath,
    args: [...agentNodeArgs(`${kind}-agent`), ...flags],
    logFile,
    pidFile: join(dir, `${kind}-agent.pid`),
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      ...agentEnvironment,
      ...env,
      KUBECONFIG: cluster.kubeconfig,
      POD_NAME: `${cluster.name}-${kind}-agent`,
      MCS_TEST_TIMINGS: JSON.stringify(timings),
    },
    cleanEnv: true,
    cwd: repoRoot(),
    detached: false,
  });
  const stop = async (): Promise<void> => {
    await stopProcesses([record], 10_000);
  };
  try {
    const outcome = await waitFor(
      `${cluster.name} ${kind} agent ready`,
      async () => {
        if (!isRunning(record)) return 'exited';
        const res = await fetch(`http://127.0.0.1:${String(health)}/readyz`).catch(() => null);
        await res?.body?.cancel();
        return res?.status === 200 ? 'ready' : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    if (outcome === 'exited') throw new Error('exited during start-up');
  } catch (err) {
    await stop();
    throw new Error(`the ${cluster.name} ${kind} agent did not start:\n${tail(logFile)}`, {
      cause: err,
    });
  } finally {
    releasePortClaims([health, metrics]);
  }
  return { logFile, process: record, stop };
}
