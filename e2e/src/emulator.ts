import { existsSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Progress } from './log.js';
import { emulatorCli } from './paths.js';
import { allocatePorts, loopback } from './ports.js';
import { spawnProcess, stopProcesses, type ProcessRecord } from './processes.js';
import { waitFor } from './wait.js';

/** Where the harness put the Cloud Map emulator, and how to stop it. */
export interface RunningEmulator {
  readonly url: string;
  readonly port: number;
  /** The emulator's DNS server (UDP and TCP), `127.0.0.1:<port>`. */
  readonly dnsAddress: string;
  readonly dnsPort: number;
  /** Set when it runs as a separate process (the CLI); absent when in-process. */
  readonly process?: ProcessRecord;
  stop(): Promise<void>;
}

/** The library API of @cloudmap-mcs/cloudmap-emulator that the harness relies on. */
interface EmulatorModule {
  startEmulator(opts: {
    port: number;
    host: string;
    dnsPort: number;
  }): Promise<{ url: string; dns?: { address: string; port: number }; stop(): Promise<void> }>;
}

export type EmulatorMode = 'auto' | 'required' | 'off';

/**
 * Environment for AWS SDK v3 clients pointed at the emulator, plus where its DNS server
 * answers for the DNS namespaces (`CLOUDMAP_EMULATOR_DNS=127.0.0.1:<port>`, UDP and TCP).
 */
export function cloudMapEnv(url: string, dnsAddress?: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_SERVICEDISCOVERY: url,
    ...(dnsAddress !== undefined ? { CLOUDMAP_EMULATOR_DNS: dnsAddress } : {}),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
}

async function loadEmulatorModule(): Promise<EmulatorModule | undefined> {
  try {
    const mod = (await import('@cloudmap-mcs/cloudmap-emulator')) as Partial<EmulatorModule>;
    return typeof mod.startEmulator === 'function' ? (mod as EmulatorModule) : undefined;
  } catch {
    return undefined;
  }
}

function unavailable(mode: EmulatorMode, why: string, progress: Progress): undefined {
  if (mode === 'required') throw new Error(`Cloud Map emulator required but unavailable: ${why}`);
  progress(`Cloud Map emulator not started: ${why}`);
  return undefined;
}

/** Starts the emulator inside this process (tests). */
export async function startInProcessEmulator(
  mode: EmulatorMode,
  progress: Progress,
): Promise<RunningEmulator | undefined> {
  if (mode === 'off') return undefined;
  const mod = await loadEmulatorModule();
  if (mod === undefined)
    return unavailable(
      mode,
      '@cloudmap-mcs/cloudmap-emulator exports no startEmulator yet',
      progress,
    );
  const emu = await mod.startEmulator({ port: 0, host: loopback, dnsPort: 0 });
  const port = Number(new URL(emu.url).port);
  if (emu.dns === undefined)
    return unavailable(mode, 'the emulator started no DNS server', progress);
  progress(`Cloud Map emulator on ${emu.url}, DNS on ${emu.dns.address}`);
  return {
    url: emu.url,
    port,
    dnsAddress: emu.dns.address,
    dnsPort: emu.dns.port,
    stop: () => emu.stop(),
  };
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: loopback });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts the emulator's CLI as a detached process that outlives the caller (make clusterset-up). */
export async function startEmulatorProcess(
  mode: EmulatorMode,
  stateDir: string,
  detached: boolean,
  progress: Progress,
): Promise<RunningEmulator | undefined> {
  if (mode === 'off') return undefined;
  const cli = emulatorCli();
  if (!existsSync(cli))
    return unavailable(mode, `${cli} not built (packages/cloudmap-emulator)`, progress);
  const dir = join(stateDir, 'emulator');
  mkdirSync(join(dir, 'pids'), { recursive: true });
  const [port, dnsPort] = await allocatePorts(2, dir);
  const record = spawnProcess({
    name: 'cloudmap-emulator',
    command: process.execPath,
    args: [cli, '--port', String(port!), '--dns-port', String(dnsPort!)],
    logFile: join(dir, 'emulator.log'),
    pidFile: join(dir, 'pids', 'emulator.pid'),
    detached,
    cwd: dir,
  });
  try {
    await waitFor('Cloud Map emulator port', () => tcpOpen(port!), { timeoutMs: 30_000 });
  } catch (err) {
    await stopProcesses([record], 2_000);
    throw err;
  }
  const url = `http://${loopback}:${port!}`;
  const dnsAddress = `${loopback}:${dnsPort!}`;
  progress(`Cloud Map emulator on ${url}, DNS on ${dnsAddress}`);
  return {
    url,
    port: port!,
    dnsAddress,
    dnsPort: dnsPort!,
    process: record,
    stop: async () => {
      await stopProcesses([record]);
    },
  };
}
