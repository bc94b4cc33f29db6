/**
 * One agent (export or import) as a real process for the fault suite: started with
 * `node packages/<kind>-agent/dist/src/main.js`, stopped with SIGTERM or killed with SIGKILL
 * (kill -9 is one of the faults), its /metrics and log readable while it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentEnvironment } from '../agent-bundle.js';
import { agentNodeArgsOf, type AgentKind } from '../demo/agents.js';
import { allocatePorts, releasePortClaims } from '../ports.js';
import { killOnExit, startTicksOf } from '../processes.js';
import { waitFor } from '../wait.js';

export interface AgentSpec {
  readonly kind: AgentKind;
  /** Unique within a run: names the log and pid files. */
  readonly name: string;
  readonly kubeconfig: string;
  /** Cloud Map endpoint (the emulator, or a cuttable proxy in front of it). */
  readonly cloudMapUrl: string;
  readonly args: readonly string[];
  /** Extra `node` options before the agent's script (a test-only `--import` preload). */
  readonly nodeArgs?: readonly string[];
  /**
   * Extra environment variables: POD_NAME / POD_NAMESPACE (this replica, the Lease's
   * namespace), or what a preload reads; never MCS_*, the agents' flags.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Test-only timings, passed as MCS_TEST_TIMINGS (docs/contributing.md#test-timings). */
  readonly timings?: Readonly<Record<string, number>>;
}

export class ChaosAgent {
  #child: ChildProcess | undefined;
  #port = 0;
  #starts = 0;
  readonly logFile: string;
  readonly #pidFile: string;

  constructor(
    readonly spec: AgentSpec,
    dir: string,
  ) {
    mkdirSync(join(dir, 'pids'), { recursive: true });
    this.logFile = join(dir, `${spec.name}.log`);
    this.#pidFile = join(dir, 'pids', `${spec.name}.pid`);
  }

  get running(): boolean {
    return (
      this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null
    );
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the process; with `ready`, resolves once /readyz answers 200. */
  async start({ ready = true, timeoutMs = 90_000 } = {}): Promise<void> {
    if (this.running) throw new Error(`${this.spec.name} already runs`);
    const [port = 0] = await allocatePorts(1, `chaos ${this.spec.name}`);
    this.#port = port;
    this.#starts += 1;
    const ports =
      this.spec.kind === 'import'
        ? [`--health-port=${port}`, `--metrics-port=${port}`, '--bind-address=127.0.0.1']
        : [`--health-port=${port}`, '--bind-address=127.0.0.1'];
    const timings = this.spec.timings;
    const out = createWriteStream(this.logFile, { flags: 'a' });
    out.write(`--- start ${String(this.#starts)} at ${new Date().toISOString()}\n`);
    const child = spawn(
      process.execPath,
      [
        ...(this.spec.nodeArgs ?? []),
        ...agentNodeArgsOf(this.spec.kind),
        ...this.spec.args,
        ...ports,
      ],
      {
        // Only what an agent needs: the runner's own MCS_* settings would be read as agent flags.
        env: {
          ...agentEnvironment,
          PATH: process.env['PATH'] ?? '',
          KUBECONFIG: this.spec.kubeconfig,
          AWS_ENDPOINT_URL_SERVICEDISCOVERY: this.spec.cloudMapUrl,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          ...(timings === undefined || Object.keys(timings).length === 0
            ? {}
            : { MCS_TEST_TIMINGS: JSON.stringify(timings) }),
          ...this.spec.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.on('error', () => {});
    killOnExit(child);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    this.#child = child;
    // A pid file, so an interrupted run's processes are found by the harness teardown.
    if (child.pid !== undefined)
      writeFileSync(
        this.#pidFile,
        `${child.pid}\n${startTicksOf(child.pid) ?? ''}\n${this.spec.name}\n`,
      );
    if (!ready) return; // the claim expires on its own
    try {
      await this.waitReady(timeoutMs);
    } finally {
      releasePortClaims([port]);
    }
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    await waitFor(
      `${this.spec.name} ready`,
      async () => {
        if (!this.running) throw new Error(`${this.spec.name} exited:\n${this.tail()}`);
        return (await this.get('/readyz')).status === 200;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  async get(path: string): Promise<{ status: number; text: string }> {
    try {
      const res = await fetch(`http://127.0.0.1:${String(this.#port)}${path}`, {
        signal: AbortSignal.timeout(3_000),
      });
      return { status: res.status, text: await res.text() };
    } catch {
      return { status: 0, text: '' };
    }
  }

  /** Sum of a metric's samples whose label text contains `labels` (0 when absent). */
  async metric(name: string, labels = ''): Promise<number> {
    const { text } = await this.get('/metrics');
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `))) continue;
      if (labels !== '' && !line.includes(labels)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  /** kill -9: no shutdown code runs, in-flight writes are cut off. */
  async kill9(): Promise<void> {
    await this.#end('SIGKILL');
  }

  /** SIGTERM (SIGKILL after 15 s). */
  async stop(): Promise<void> {
    await this.#end('SIGTERM');
  }

  async #end(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    if (this.running) {
      const exited = new Promise<void>((res) => child.once('exit', () => res()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    this.#child = undefined;
    rmSync(this.#pidFile, { force: true });
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** Log lines containing `text` (the agents log one JSON object a line). */
  logLines(text: string): number {
    return this.log()
      .split('\n')
      .filter((l) => l.includes(text)).length;
  }

  tail(lines = 15): string {
    return this.log().trimEnd().split('\n').slice(-lines).join('\n');
  }
}
