import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HEARTBEAT_SERVICE_NAME,
  encodeClusterExport,
  encodeHeartbeat,
  type CloudMapPort,
  type ClusterExport,
} from '@cloudmap-mcs/core';
import { createSdkCloudMapPort, createServiceDiscoveryClient } from '@cloudmap-mcs/core/cloudmap';
import { agentEnvironment, agentNodeArgs, killOnExit, waitFor } from '@cloudmap-mcs/e2e';

/** A Cloud Map client for the test itself, playing the export side against the emulator. */
export function testCloudMap(env: Readonly<Record<string, string>>): CloudMapPort {
  return createSdkCloudMapPort(
    createServiceDiscoveryClient({
      endpoint: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? '',
      region: env['AWS_REGION'] ?? 'us-east-1',
      credentials: async () => ({
        accessKeyId: env['AWS_ACCESS_KEY_ID'] ?? 'test',
        secretAccessKey: env['AWS_SECRET_ACCESS_KEY'] ?? 'test',
      }),
    }),
  );
}

async function settled(cm: CloudMapPort, operationId: string): Promise<void> {
  await waitFor(`operation ${operationId}`, async () => {
    const op = await cm.getOperation(operationId);
    if (op.status === 'FAIL') throw new Error(`operation failed: ${op.errorMessage ?? ''}`);
    return op.status === 'SUCCESS';
  });
}

/** Writes records the way an export agent would: namespace, service, instances. */
export class Publisher {
  readonly #cm: CloudMapPort;
  readonly #ids = new Map<string, string>();
  constructor(cm: CloudMapPort) {
    this.#cm = cm;
  }

  async serviceId(namespace: string, name: string): Promise<string> {
    const key = `${namespace}/${name}`;
    const known = this.#ids.get(key);
    if (known !== undefined) return known;
    let ns = (await this.#cm.listNamespaces()).find((n) => n.name === namespace);
    if (ns === undefined) {
      const ref = await this.#cm.createHttpNamespace(namespace, {});
      await settled(this.#cm, ref.operationId);
      ns = (await this.#cm.listNamespaces()).find((n) => n.name === namespace);
    }
    if (ns === undefined) throw new Error(`namespace ${namespace} not created`);
    const svc =
      (await this.#cm.listServices(ns.id)).find((s) => s.name === name) ??
      (await this.#cm.createService(ns.id, name, {}));
    this.#ids.set(key, svc.id);
    return svc.id;
  }

  async register(
    namespace: string,
    name: string,
    id: string,
    attributes: Record<string, string>,
  ): Promise<void> {
    const serviceId = await this.serviceId(namespace, name);
    await settled(
      this.#cm,
      (await this.#cm.registerInstance(serviceId, id, attributes)).operationId,
    );
  }

  /** Replaces one cluster's records of a service with `exp`'s. */
  async publish(exp: ClusterExport): Promise<void> {
    const serviceId = await this.serviceId(exp.namespace, exp.name);
    const { instances, problems } = encodeClusterExport(exp);
    if (problems.length > 0) throw new Error(problems.map((p) => p.message).join('; '));
    const keep = new Set(instances.map((i) => i.id));
    const old = await this.#cm.listInstances(serviceId);
    const ops: string[] = [];
    for (const i of instances)
      ops.push((await this.#cm.registerInstance(serviceId, i.id, i.attributes)).operationId);
    for (const i of old) {
      if (i.attributes['CLUSTER_ID'] === exp.cluster.clusterId && !keep.has(i.id)) {
        ops.push((await this.#cm.deregisterInstance(serviceId, i.id)).operationId);
      }
    }
    for (const op of ops) await settled(this.#cm, op);
  }

  async unpublish(namespace: string, name: string, clusterId: string): Promise<void> {
    const serviceId = await this.serviceId(namespace, name);
    for (const i of await this.#cm.listInstances(serviceId)) {
      if (i.attributes['CLUSTER_ID'] === clusterId)
        await settled(this.#cm, (await this.#cm.deregisterInstance(serviceId, i.id)).operationId);
    }
  }

  async heartbeat(
    namespace: string,
    clusterId: string,
    clustersetId: string,
    renewedAtMs = Date.now(),
  ): Promise<void> {
    const hb = encodeHeartbeat({
      cluster: { clusterId, clustersetId },
      renewedAtMs,
      periodSeconds: 2,
    });
    await this.register(namespace, HEARTBEAT_SERVICE_NAME, hb.id, hb.attributes);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => res(port));
    });
  });
}

/** One import agent as a real process. */
export class AgentProcess {
  #child: ChildProcess | undefined;
  readonly logFile: string;
  port = 0;
  constructor(
    readonly name: string,
    readonly args: readonly string[],
    readonly env: Readonly<Record<string, string>>,
    readonly kind: 'import' | 'export' = 'import',
  ) {
    const dir = join(tmpdir(), 'cloudmap-mcs-import-int');
    mkdirSync(dir, { recursive: true });
    this.logFile = join(dir, `${name}-${String(Date.now())}.log`);
  }

  async start(): Promise<void> {
    this.port = await freePort();
    const out = createWriteStream(this.logFile, { flags: 'a' });
    const portArgs =
      this.kind === 'import'
        ? [
            '--health-port',
            String(this.port),
            '--metrics-port',
            String(this.port),
            '--bind-address',
            '127.0.0.1',
          ]
        : ['--health-port', String(this.port), '--bind-address', '127.0.0.1'];
    // The agent's bundle, as the image runs it (e2e/src/agent-bundle.ts).
    const node = agentNodeArgs(this.kind === 'import' ? 'import-agent' : 'export-agent');
    const child = spawn(process.execPath, [...node, ...this.args, ...portArgs], {
      // The test runner's own MCS_E2E_* settings are not agent flags (the export agent's strict
      // yargs .env('MCS') would refuse them as unknown arguments).
      env: {
        ...agentEnvironment,
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MCS_'))),
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    killOnExit(child);
    this.#child = child;
    await waitFor(`${this.name} ready`, async () => (await this.get('/readyz')).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
  }

  async get(path: string): Promise<{ status: number; text: string }> {
    try {
      const res = await fetch(`http://127.0.0.1:${String(this.port)}${path}`);
      return { status: res.status, text: await res.text() };
    } catch {
      return { status: 0, text: '' };
    }
  }

  /** Sum of a metric's samples (all label sets), 0 when absent. */
  async metric(name: string, labels = ''): Promise<number> {
    const { text } = await this.get('/metrics');
    let sum = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
        if (labels !== '' && !line.includes(labels)) continue;
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise<void>((res) => child.once('exit', () => res()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    this.#child = undefined;
  }
}
