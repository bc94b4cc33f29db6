/**
 * The migration test's observers: the traffic client (client.ts) run inside a client pod's
 * network namespace, and a watch on each cluster's clusterset IP for the service.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { repoRoot } from '../paths.js';
import { spawnProcess, stopProcesses, type ProcessRecord } from '../processes.js';
import { nodeImageRefs } from '../nodes/images.js';
import { startSleepPod } from '../nodes/workloads.js';
import { waitFor } from '../wait.js';
import type { ClientFigures } from './client.js';

/** A pod whose only process is `sleep <marker>`, so its pid (and network namespace) is findable. */
export async function startMarkedPod(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<number> {
  const marker = String(200_000_000 + Math.floor(Math.random() * 100_000_000));
  await startSleepPod(kc, namespace, name, nodeImageRefs.busybox, marker);
  return waitFor(
    `the process of pod ${name}`,
    async () => {
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          if (cmd[0]?.endsWith('sleep') && cmd[1] === marker) return Number(pid);
        } catch {
          // gone meanwhile
        }
      }
      return undefined;
    },
    { timeoutMs: 20_000, intervalMs: 300 },
  );
}

export interface TrafficClient {
  readonly record: ProcessRecord;
  figures(): ClientFigures | undefined;
  stop(): Promise<ClientFigures>;
}

/** Runs client.js in the network namespace of process `pid` (a pod's). */
export function startTrafficClient(o: {
  pid: number;
  dns: string;
  name: string;
  dir: string;
}): TrafficClient {
  const out = join(o.dir, 'client.json');
  const record = spawnProcess({
    name: 'migration-client',
    command: 'nsenter',
    args: [
      `--net=/proc/${o.pid}/ns/net`,
      '--',
      process.execPath,
      // The compiled client (vitest runs this module from source).
      join(repoRoot(), 'e2e', 'dist', 'src', 'migration', 'client.js'),
      '--dns',
      o.dns,
      '--name',
      o.name,
      '--out',
      out,
    ],
    logFile: join(o.dir, 'client.log'),
    pidFile: join(o.dir, 'client.pid'),
    detached: false,
    cwd: o.dir,
  });
  const figures = (): ClientFigures | undefined =>
    existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as ClientFigures) : undefined;
  return {
    record,
    figures,
    stop: async () => {
      await stopProcesses([record], 10_000);
      const f = figures();
      if (f === undefined) throw new Error(`the traffic client wrote no figures (${out})`);
      return f;
    },
  };
}

const SI = { group: 'multicluster.x-k8s.io', version: 'v1beta1', plural: 'serviceimports' };

export async function clustersetIps(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  try {
    const si = (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...SI, namespace, name })) as { spec?: { ips?: string[] } };
    const ips = si.spec?.ips ?? [];
    return ips.length === 0 ? undefined : ips.join(',');
  } catch {
    return undefined;
  }
}

/** Samples each cluster's clusterset IP every second; `changes` lists every value seen after the first. */
export class IpWatch {
  readonly seen = new Map<string, { at: number; ips: string }[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clusters: readonly { name: string; kc: KubeConfig }[],
    private readonly namespace: string,
    private readonly service: string,
  ) {}

  async sample(): Promise<void> {
    for (const c of this.clusters) {
      const ips = (await clustersetIps(c.kc, this.namespace, this.service)) ?? '(none)';
      const list = this.seen.get(c.name) ?? [];
      if (list.at(-1)?.ips !== ips) list.push({ at: Date.now(), ips });
      this.seen.set(c.name, list);
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.sample(), 1000);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Each cluster's distinct values in order. */
  values(): Record<string, string[]> {
    return Object.fromEntries([...this.seen].map(([k, v]) => [k, v.map((s) => s.ips)]));
  }
}
