#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { startEmulator, type EmulatorOptions } from './server.js';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const USAGE = `Usage: cloudmap-emulator --port N [--host 127.0.0.1] [--state-file F] [--operation-delay-ms N]

Serves the AWS Cloud Map API (AWS JSON 1.1) and the admin API under /_emulator/.
Point the AWS SDK at the printed URL (AWS_ENDPOINT_URL_SERVICEDISCOVERY=<url>, and
disableHostPrefix: true for DiscoverInstances). Stops cleanly on SIGTERM and SIGINT.`;

function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`--${name} must be a non-negative integer, got ${value}`);
  return Number(value);
}

export function parseCli(argv: string[]): EmulatorOptions & { help: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'state-file': { type: 'string' },
      'operation-delay-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  const port = int('port', values.port);
  const delay = int('operation-delay-ms', values['operation-delay-ms']);
  if (port === undefined && !values.help)
    throw new UsageError('--port is required (0 picks a free port)');
  return {
    help: values.help ?? false,
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values['state-file'] !== undefined ? { stateFile: values['state-file'] } : {}),
    ...(delay !== undefined ? { operationDelayMs: delay } : {}),
  };
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parseCli>;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const emu = await startEmulator(options);
  // The first stdout line is the URL, so scripts can read it (`--port 0` included).
  console.log(emu.url);
  console.error(`cloudmap-emulator: Cloud Map API and admin API (${emu.url}/_emulator/) listening`);
  const shutdown = (signal: string): void => {
    console.error(`cloudmap-emulator: ${signal}, stopping`);
    emu.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('cloudmap-emulator: stop failed', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

await main();
