/**
 * The Cloud Map emulator for one benchmark phase, as its own process (its CPU is not charged
 * to the bench runner) with gateway mode on, so the AWS Go controller's unmodified SDK reaches
 * it through HTTPS_PROXY and a local CA (docs/cloudmap-emulator.md).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import { emulatorCli } from '../paths.js';
import { allocatePorts, loopback, releasePortClaims } from '../ports.js';
import { spawnProcess, stopProcesses, type ProcessRecord } from '../processes.js';
import { waitFor } from '../wait.js';
import { tail } from '../demo/agents.js';

export interface BenchEmulator {
  readonly url: string;
  readonly admin: EmulatorAdminClient;
  /** HTTPS_PROXY value for gateway clients. */
  readonly proxyUrl: string;
  /** The gateway's CA (PEM file) gateway clients must trust. */
  readonly caFile: string;
  readonly process: ProcessRecord;
  stop(): Promise<void>;
}

export async function startBenchEmulator(dir: string): Promise<BenchEmulator> {
  const cli = emulatorCli();
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (make build)`);
  mkdirSync(join(dir, 'pids'), { recursive: true });
  const caDir = join(dir, 'gateway-ca');
  const [port, gatewayPort] = await allocatePorts(2, dir);
  const logFile = join(dir, 'emulator.log');
  const record = spawnProcess({
    name: 'cloudmap-emulator',
    command: process.execPath,
    args: [
      cli,
      '--port',
      String(port!),
      '--gateway-port',
      String(gatewayPort!),
      '--gateway-ca-dir',
      caDir,
    ],
    logFile,
    pidFile: join(dir, 'pids', 'emulator.pid'),
    detached: false,
    cwd: dir,
  });
  const url = `http://${loopback}:${port!}`;
  const admin = new EmulatorAdminClient(url);
  try {
    await waitFor(
      'Cloud Map emulator (gateway mode)',
      async () => existsSync(join(caDir, 'ca.pem')) && (await admin.health()).status !== '',
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  } catch (err) {
    await stopProcesses([record], 2_000);
    throw new Error(`the Cloud Map emulator did not start; last log lines:\n${tail(logFile)}`, {
      cause: err,
    });
  } finally {
    releasePortClaims([port!, gatewayPort!]);
  }
  return {
    url,
    admin,
    proxyUrl: `http://${loopback}:${gatewayPort!}`,
    caFile: join(caDir, 'ca.pem'),
    process: record,
    stop: async () => {
      await stopProcesses([record]);
    },
  };
}
