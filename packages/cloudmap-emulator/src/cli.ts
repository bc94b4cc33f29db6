#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startEmulator, type EmulatorOptions } from './server.js';
import { DEFAULT_QUOTAS, type Quotas } from './model.js';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const USAGE = `Usage: cloudmap-emulator --port N [--host 127.0.0.1] [--state-file F] [--operation-delay-ms N]
                         [--gateway-port N [--gateway-ca-dir D]] [--dns-port N]
                         [--quota instancesPerNamespace=N ...]

Serves the AWS Cloud Map API (AWS JSON 1.1) and the admin API under /_emulator/.
Point the AWS SDK at the printed URL (AWS_ENDPOINT_URL_SERVICEDISCOVERY=<url>, and
disableHostPrefix: true for DiscoverInstances). With --gateway-port, also an HTTPS CONNECT
proxy that serves servicediscovery.<region>.amazonaws.com, and DiscoverInstances* only on
data-servicediscovery.<region>.amazonaws.com as AWS does, with a local CA (HTTPS_PROXY=<gateway
url>; AWS_CA_BUNDLE=<ca file> for the Go SDK and the CLI, NODE_EXTRA_CA_CERTS=<ca file> and
NODE_USE_ENV_PROXY=1 for Node.js).
With --dns-port, also a DNS server (UDP and TCP, same host) answering A/AAAA/SRV/CNAME
queries for the DNS namespaces' services as Route 53 would (0 picks a free port).
Stops cleanly on SIGTERM and SIGINT.`;

function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`--${name} must be a non-negative integer, got ${value}`);
  return Number(value);
}

/** `name=value` pairs naming DEFAULT_QUOTAS keys, values non-negative integers. */
function parseQuotas(pairs: readonly string[]): Partial<Quotas> {
  const out: Partial<Quotas> = {};
  for (const pair of pairs) {
    const [name = '', value] = pair.split('=', 2);
    if (!(name in DEFAULT_QUOTAS) || value === undefined || !/^[0-9]+$/.test(value))
      throw new UsageError(
        `--quota ${pair}: expected <name>=<count> with name one of ${Object.keys(DEFAULT_QUOTAS).join(', ')}`,
      );
    out[name as keyof Quotas] = Number(value);
  }
  return out;
}

export function parseCli(argv: string[]): EmulatorOptions & { help: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'state-file': { type: 'string' },
      'operation-delay-ms': { type: 'string' },
      'gateway-port': { type: 'string' },
      'gateway-ca-dir': { type: 'string' },
      'dns-port': { type: 'string' },
      // Cloud Map's adjustable quotas, as raised in Service Quotas: --quota instancesPerNamespace=5000
      quota: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  const port = int('port', values.port);
  const delay = int('operation-delay-ms', values['operation-delay-ms']);
  const gatewayPort = int('gateway-port', values['gateway-port']);
  const dnsPort = int('dns-port', values['dns-port']);
  if (values['gateway-ca-dir'] !== undefined && gatewayPort === undefined) {
    throw new UsageError('--gateway-ca-dir needs --gateway-port');
  }
  if (port === undefined && !values.help)
    throw new UsageError('--port is required (0 picks a free port)');
  const quotas = parseQuotas(values.quota ?? []);
  return {
    help: values.help ?? false,
    ...(Object.keys(quotas).length > 0 ? { quotas } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values['state-file'] !== undefined ? { stateFile: values['state-file'] } : {}),
    ...(delay !== undefined ? { operationDelayMs: delay } : {}),
    ...(gatewayPort !== undefined ? { gatewayPort } : {}),
    ...(values['gateway-ca-dir'] !== undefined ? { gatewayCaDir: values['gateway-ca-dir'] } : {}),
    ...(dnsPort !== undefined ? { dnsPort } : {}),
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
  if (emu.gateway) {
    console.error(
      `cloudmap-emulator: gateway: HTTPS_PROXY=${emu.gateway.url} AWS_CA_BUNDLE=${emu.gateway.caFile} (Node.js: NODE_EXTRA_CA_CERTS=${emu.gateway.caFile} NODE_USE_ENV_PROXY=1)`,
    );
  }
  if (emu.dns) {
    // Scripts read this line for the resolver address (`--dns-port 0` included).
    console.error(`cloudmap-emulator: dns: ${emu.dns.address} (UDP and TCP)`);
  }
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

// Imported by tests for parseCli; run only as the program itself.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href)
  await main();
