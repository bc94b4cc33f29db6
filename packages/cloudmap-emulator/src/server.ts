import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { handleAdmin, type AdminContext } from './admin-api.js';
import { EmulatorAdminClient } from './admin-client.js';
import { ADMIN_PREFIX, type EmulatorConfig } from './admin-types.js';
import { Engine } from './engine.js';
import type { StatusMode } from './errors.js';
import { Faults } from './faults.js';
import { LocalCa } from './gateway/ca.js';
import { startGateway } from './gateway/proxy.js';
import type { Quotas } from './model.js';
import { StateFile } from './persistence.js';
import { startDnsServer, type DnsServerInfo, type RunningDnsServer } from './dns/server.js';
import { handleAwsCall } from './protocol.js';
import { Stats } from './stats.js';

export interface EmulatorOptions {
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /** Load state from this file if it exists, and keep it written there. */
  stateFile?: string;
  /** Submission to SUCCESS/FAIL for asynchronous operations (default 100 ms). */
  operationDelayMs?: number;
  statusMode?: StatusMode;
  quotas?: Partial<Quotas>;
  region?: string;
  accountId?: string;
  /** Also start gateway mode (HTTPS CONNECT proxy) on this port; 0 picks a free one. */
  gatewayPort?: number;
  /** Keep the gateway's CA in this directory (ca.pem, ca-key.pem) and reuse it on restart. */
  gatewayCaDir?: string;
  /**
   * Also answer DNS queries (UDP and TCP) for the DNS namespaces on this port of `host`;
   * 0 picks a free one. Absent: no DNS server.
   */
  dnsPort?: number;
}

export interface GatewayInfo {
  /** `http://127.0.0.1:<port>`: set HTTPS_PROXY to it. */
  url: string;
  port: number;
  /** The CA that signs the intercepted hosts' certificates; give clients this bundle. */
  caCertPem: string;
  caFile: string;
}

export interface RunningEmulator {
  /** `http://<host>:<port>`; give it to the SDK as `endpoint` with `disableHostPrefix: true`. */
  url: string;
  port: number;
  admin: EmulatorAdminClient;
  /** The node:http server; gateway mode feeds decrypted connections into it. */
  server: Server;
  /** Present when started with `gatewayPort`. */
  gateway: GatewayInfo | undefined;
  /** Present when started with `dnsPort`: where A/AAAA/SRV queries are answered. */
  dns: DnsServerInfo | undefined;
  stop: () => Promise<void>;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? '127.0.0.1';
  const engine = new Engine({
    ...(options.operationDelayMs !== undefined
      ? { operationDelayMs: options.operationDelayMs }
      : {}),
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.accountId !== undefined ? { accountId: options.accountId } : {}),
    quotas: options.quotas,
  });
  let statusMode: StatusMode = options.statusMode ?? 'observed';
  const faults = new Faults();
  const stats = new Stats();
  const stateFile = options.stateFile ? new StateFile(options.stateFile, engine) : undefined;
  stateFile?.load();

  const config = (): EmulatorConfig => ({
    operationDelayMs: engine.options.operationDelayMs,
    idempotencyWindowMs: engine.options.idempotencyWindowMs,
    quotas: { ...engine.options.quotas },
    statusMode,
    region: engine.options.region,
    accountId: engine.options.accountId,
  });
  const admin: AdminContext = {
    engine,
    faults,
    stats,
    stateFile,
    config,
    setConfig: (patch) => {
      const { statusMode: mode, quotas, ...rest } = patch;
      Object.assign(engine.options, rest, { quotas: { ...engine.options.quotas, ...quotas } });
      if (mode) statusMode = mode;
    },
  };
  const protocol = {
    engine,
    faults,
    stats,
    statusMode: () => statusMode,
    afterCall: () => stateFile?.changed(),
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const done = path.startsWith(`${ADMIN_PREFIX}/`)
      ? handleAdmin(req, res, path.slice(ADMIN_PREFIX.length), admin)
      : req.method === 'POST' && path === '/'
        ? handleAwsCall(req, res, protocol)
        : Promise.resolve(
            void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found'),
          );
    done.catch((err: unknown) => {
      console.error('cloudmap-emulator: request failed', err);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let gateway: Awaited<ReturnType<typeof openGateway>> | undefined;
  let dns: RunningDnsServer | undefined;
  try {
    gateway = options.gatewayPort === undefined ? undefined : await openGateway(server, options);
    dns =
      options.dnsPort === undefined
        ? undefined
        : await startDnsServer(engine, { port: options.dnsPort, host });
  } catch (err) {
    // A gateway or DNS server that cannot start (port taken) must not leave the others open.
    await gateway?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= Promise.all([gateway?.stop(), dns?.stop()])
      .then(
        () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            // Keep-alive connections from SDK clients would hold close() open indefinitely.
            server.closeAllConnections();
          }),
      )
      .then(() => {
        if (stateFile) {
          engine.advance();
          stateFile.save();
        }
      }));

  return {
    url,
    port,
    admin: new EmulatorAdminClient(url),
    server,
    gateway: gateway?.info,
    dns: dns?.info,
    stop,
  };
}

async function openGateway(
  server: Server,
  options: EmulatorOptions,
): Promise<{ info: GatewayInfo; stop: () => Promise<void> }> {
  const ownDir = options.gatewayCaDir === undefined;
  const dir = options.gatewayCaDir ?? mkdtempSync(join(tmpdir(), 'cloudmap-emulator-ca-'));
  const ca = LocalCa.loadOrCreate(dir);
  let gw: Awaited<ReturnType<typeof startGateway>>;
  try {
    gw = await startGateway({
      ca,
      target: server,
      port: options.gatewayPort ?? 0,
      // The gateway signs certificates for AWS host names: it only ever listens on loopback,
      // even when the API itself is exposed more widely.
      host: options.host !== undefined && isLoopback(options.host) ? options.host : '127.0.0.1',
    });
  } catch (err) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    info: { url: gw.url, port: gw.port, caCertPem: ca.certPem, caFile: join(dir, 'ca.pem') },
    stop: async () => {
      await gw.stop();
      // A CA made for this run only is removed with it; a given directory is kept.
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
