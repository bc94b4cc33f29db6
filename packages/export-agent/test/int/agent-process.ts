import { spawn, type ChildProcess } from 'node:child_process';
import { agentEnvironment, agentNodeArgs, killOnExit } from '@cloudmap-mcs/e2e';

export interface AgentProcess {
  readonly logs: string[];
  /** Resolves with the exit code when the process ends on its own or after `stop`. */
  readonly exited: Promise<number | null>;
  /** The agent's /metrics text (its health port is read from the start-up log line). */
  metrics(): Promise<string>;
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs the built export agent as a real process (its bundle, as the image runs it). Tests get a
 * 2 s resync unless `timing` is `defaults`: the periods a user runs with, for tests that
 * show what happens without the resync's help.
 */
export function startAgentProcess(
  kubeconfigPath: string,
  awsEnv: Readonly<Record<string, string>>,
  extraArgs: readonly string[] = [],
  timing: 'fast' | 'defaults' = 'fast',
): AgentProcess {
  const logs: string[] = [];
  // A 2 s resync is a test's choice: no background budget stretches it. The heartbeat renews
  // every 600 s rather than 30 s, as these tests always had it.
  const fast = ['--resync-seconds', '2', '--background-budget', '0'];
  const fastTimings = { MCS_TEST_TIMINGS: JSON.stringify({ heartbeatSeconds: 600 }) };
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...agentNodeArgs('export-agent'),
      '--leader-elect=false',
      '--health-port',
      '0',
      '--bind-address',
      '127.0.0.1',
      ...(timing === 'fast' ? fast : []),
      '--log-level',
      'debug',
      ...extraArgs,
    ],
    {
      env: {
        ...agentEnvironment,
        PATH: process.env['PATH'] ?? '',
        KUBECONFIG: kubeconfigPath,
        ...(timing === 'fast' ? fastTimings : {}),
        ...awsEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  killOnExit(child);
  const collect = (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const healthPort = (): number | undefined => {
    const line = logs.find((l) => l.includes('health server listening'));
    const port = line?.match(/"address":"[^"]*:(\d+)"/)?.[1];
    return port === undefined ? undefined : Number(port);
  };
  return {
    logs,
    exited,
    async metrics() {
      const port = healthPort();
      if (port === undefined) throw new Error('the agent has not logged its health port yet');
      return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
