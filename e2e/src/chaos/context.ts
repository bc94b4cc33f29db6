/**
 * What a scenario gets: the clusters, the emulator (admin API for faults), a Cloud Map
 * client, and factories for agents, proxies and namespaces that the runner cleans up after
 * the scenario whatever its outcome.
 */
import { EmulatorAdminClient } from '@cloudmap-mcs/cloudmap-emulator';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dumpYaml, loadYaml } from '@kubernetes/client-node';
import { createNamespace, type TestNamespace } from '../namespaces.js';
import { ChaosAgent, type AgentSpec } from './agent.js';
import type { ChaosCluster } from './kube.js';
import type { Profile } from './profile.js';
import { CuttableProxy } from './proxy.js';
import { CloudMapRecords, sdkClient } from './records.js';
import { HangingTcpProxy } from './tcp-proxy.js';

export interface ChaosEnvironment {
  readonly clusters: readonly ChaosCluster[];
  /** The emulator's URL (AWS endpoint and admin API). */
  readonly emulatorUrl: string;
  /** Where agent logs and pid files go. */
  readonly workDir: string;
}

/** `--flag=value` list where a later flag replaces an earlier one of the same name. */
export function mergeFlags(flags: readonly string[]): string[] {
  const byName = new Map<string, string>();
  for (const f of flags) byName.set(f.split('=')[0] ?? f, f);
  return [...byName.values()];
}

export class ChaosContext {
  readonly admin: EmulatorAdminClient;
  readonly records: CloudMapRecords;
  readonly #agents: ChaosAgent[] = [];
  readonly #proxies: (CuttableProxy | HangingTcpProxy)[] = [];
  readonly #namespaces: TestNamespace[] = [];
  readonly #heartbeats: NodeJS.Timeout[] = [];

  constructor(
    readonly env: ChaosEnvironment,
    readonly profile: Profile,
    readonly scenario: string,
  ) {
    this.admin = new EmulatorAdminClient(env.emulatorUrl);
    this.records = new CloudMapRecords(sdkClient(env.emulatorUrl));
  }

  get clusters(): readonly ChaosCluster[] {
    return this.env.clusters;
  }

  cluster(i: number): ChaosCluster {
    const c = this.env.clusters[i];
    if (c === undefined) throw new Error(`the fault suite needs ${String(i + 1)} clusters`);
    return c;
  }

  /** A namespace of the same random name in every cluster. */
  async namespace(prefix = this.scenario): Promise<string> {
    const ns = await createNamespace(
      this.env.clusters.map((c) => c.kc),
      `chaos-${prefix}`.slice(0, 40),
    );
    this.#namespaces.push(ns);
    return ns.name;
  }

  /** An agent process (not started) for cluster `c`, talking to `cloudMapUrl` (default the emulator). */
  agent(
    kind: AgentSpec['kind'],
    c: ChaosCluster,
    {
      name = `${kind}-${c.name}`,
      args = [],
      cloudMapUrl = this.env.emulatorUrl,
      nodeArgs,
      env,
      timings,
      kubeconfig = c.kubeconfigPath,
    }: {
      name?: string;
      args?: readonly string[];
      /** Over the profile's test-only timings of this kind of agent. */
      timings?: Readonly<Record<string, number>>;
      cloudMapUrl?: string;
      /** Another way to the cluster's API server (a `kubeProxy` kubeconfig). */
      kubeconfig?: string;
      nodeArgs?: readonly string[];
      env?: Readonly<Record<string, string>>;
    } = {},
  ): ChaosAgent {
    const side = kind === 'import' ? this.profile.import : this.profile.export;
    const agent = new ChaosAgent(
      {
        kind,
        name: `${this.scenario}-${name}`,
        kubeconfig,
        cloudMapUrl,
        args: mergeFlags([
          ...side.args,
          ...(kind === 'export' ? ['--leader-elect=false'] : []),
          ...args,
        ]),
        ...(nodeArgs === undefined ? {} : { nodeArgs }),
        // The export agent's replica name, as the downward API gives it in a Pod.
        env: { ...(kind === 'export' ? { POD_NAME: `${c.name}-${name}` } : {}), ...env },
        timings: { ...side.timings, ...timings },
      },
      join(this.env.workDir, 'agents'),
    );
    this.#agents.push(agent);
    return agent;
  }

  /** Import agents (one per cluster, started and ready). */
  async importers(args: readonly string[] = []): Promise<ChaosAgent[]> {
    const agents = this.env.clusters.map((c) => this.agent('import', c, { args }));
    for (const a of agents) await a.start();
    return agents;
  }

  async proxy(): Promise<CuttableProxy> {
    const p = new CuttableProxy(this.env.emulatorUrl);
    await p.start();
    this.#proxies.push(p);
    return p;
  }

  /**
   * A hangable TCP proxy in front of `c`'s API server and a copy of its kubeconfig that goes
   * through it (`name` names the copy), for `agent(..., { kubeconfig })`.
   */
  async kubeProxy(
    c: ChaosCluster,
    name: string,
  ): Promise<{ proxy: HangingTcpProxy; kubeconfig: string }> {
    type Doc = { clusters?: { cluster: { server: string } }[] };
    const doc = loadYaml<Doc>(readFileSync(c.kubeconfigPath, 'utf8'));
    const entry = doc.clusters?.[0]?.cluster;
    if (entry === undefined || doc.clusters?.length !== 1)
      throw new Error(`${c.kubeconfigPath}: expected one cluster`);
    const server = new URL(entry.server);
    const proxy = new HangingTcpProxy(server.hostname, Number(server.port));
    await proxy.start();
    this.#proxies.push(proxy);
    entry.server = `https://127.0.0.1:${String(proxy.listenPort)}`;
    const dir = join(this.env.workDir, 'kubeconfigs');
    mkdirSync(dir, { recursive: true });
    const kubeconfig = join(dir, `${this.scenario}-${name}.yaml`);
    writeFileSync(kubeconfig, dumpYaml(doc), { mode: 0o600 });
    return { proxy, kubeconfig };
  }

  /**
   * Writes a heartbeat for a cluster the test plays (a hostile or fake exporter) now and then
   * every quarter TTL until the scenario ends, as a live export agent would: its records must
   * not be dropped as stale while the scenario waits.
   */
  async keepAlive(
    namespace: string,
    clusterId: string,
    clustersetId = 'e2e-clusterset',
  ): Promise<void> {
    await this.records.heartbeat(namespace, clusterId, clustersetId);
    const every = Math.max(1_000, (this.profile.import.ttlS * 1000) / 4);
    const timer = setInterval(() => {
      this.records.heartbeat(namespace, clusterId, clustersetId).catch(() => undefined);
    }, every);
    this.#heartbeats.push(timer);
  }

  /** Stops everything the scenario started and lifts every fault. */
  async cleanup(): Promise<void> {
    for (const t of this.#heartbeats.splice(0)) clearInterval(t);
    await this.admin.clearFaults().catch(() => undefined);
    for (const a of this.#agents) await a.stop().catch(() => undefined);
    for (const p of this.#proxies) await p.stop().catch(() => undefined);
    for (const ns of this.#namespaces) {
      await ns.delete({ wait: false }).catch(() => undefined);
      await this.records.removeNamespace(ns.name).catch(() => undefined);
    }
  }
}
