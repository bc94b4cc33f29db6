/**
 * What the migration doc's commands act on, where the test runs the programs as processes
 * (as the bench does) instead of as pods:
 * - the AWS controller: a Deployment `cloud-map-mcs-system/cloud-map-mcs-controller-manager`
 *   (its install's names) whose pods only sleep; a supervisor runs the real controller
 *   process while the Deployment asks for replicas, and stops it when it is scaled to 0 or
 *   deleted — so `kubectl scale` and `kubectl delete namespace` from the doc do what they do;
 * - helm: a stand-in on PATH records `helm install|upgrade|uninstall` per cluster (checking
 *   the cluster ID the doc passes), and the supervisor runs or stops our two agents.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ignoreAlreadyExists, statusOf } from '../resources.js';
import type { BenchEmulator } from '../bench/gateway-emulator.js';
import { startSide, stopSide, type BenchProcess, type SideCluster } from '../bench/sides.js';
import { ensureNamespace } from '../bench/workload.js';
import { nodeImageRefs } from '../nodes/images.js';
import { labelledDeployment } from '../nodes/workloads.js';

export const CONTROLLER_NS = 'cloud-map-mcs-system';
export const CONTROLLER_DEPLOY = 'cloud-map-mcs-controller-manager';

/** The controller's Deployment (replicas 1, a pod that sleeps) and one of its ClusterRoles. */
export async function createControllerDeployment(kc: KubeConfig): Promise<void> {
  await kc
    .makeApiClient(RbacAuthorizationV1Api)
    .createClusterRole({ body: { metadata: { name: 'cloud-map-mcs-manager-role' }, rules: [] } })
    .catch(ignoreAlreadyExists);
  await ensureNamespace(kc, CONTROLLER_NS);
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: CONTROLLER_NS,
    body: labelledDeployment({
      namespace: CONTROLLER_NS,
      name: CONTROLLER_DEPLOY,
      labels: { 'control-plane': 'controller-manager' },
      replicas: 1,
      pod: {
        // Stand-in: the controller runs as a process beside the cluster (see above); the
        // pod only sleeps, so `kubectl rollout status` works as on the real Deployment.
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'manager',
            image: nodeImageRefs.busybox,
            imagePullPolicy: 'Never',
            command: ['sleep', '100000'],
          },
        ],
      },
    }),
  });
}

/** A `helm` on PATH that records the release's wanted state in `dir/<cluster>.helm`. */
export function writeHelmStandIn(binDir: string, stateDir: string): void {
  mkdirSync(binDir, { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  const script = `#!/usr/bin/env bash
# Test stand-in for helm (e2e/src/migration/stand-ins.ts): the agents run as processes.
set -euo pipefail
f="${stateDir}/\${MIGRATION_CLUSTER:?}.helm"
case "$1" in
  install|upgrade) printf '%s\\n' "$*" >"$f" ;;
  uninstall) rm -f "$f" ;;
  *) echo "helm stand-in: $1 is not supported" >&2; exit 2 ;;
esac
`;
  writeFileSync(join(binDir, 'helm'), script);
  chmodSync(join(binDir, 'helm'), 0o755);
}

interface Managed {
  readonly cluster: SideCluster;
  readonly kc: KubeConfig;
  controller: BenchProcess[];
  agents: BenchProcess[];
}

/** Keeps each cluster's processes as the Deployment and the helm record ask; `log` says each change. */
export class Supervisor {
  private readonly managed: Managed[];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  readonly events: string[] = [];
  error: Error | undefined;

  constructor(
    clusters: readonly { side: SideCluster; kc: KubeConfig }[],
    private readonly emu: BenchEmulator,
    private readonly helmDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.managed = clusters.map((c) => ({ cluster: c.side, kc: c.kc, controller: [], agents: [] }));
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.busy) void this.tick();
    }, 300);
  }

  /** One pass now (the test awaits it after each doc step). */
  async tick(): Promise<void> {
    // A pass already running may have read the state before the caller's change: wait for
    // it, then make one of our own.
    while (this.busy) await new Promise((r) => setTimeout(r, 50));
    this.busy = true;
    try {
      for (const m of this.managed) await this.converge(m);
    } catch (e) {
      this.error ??= e as Error;
    } finally {
      this.busy = false;
    }
  }

  private async converge(m: Managed): Promise<void> {
    const name = m.cluster.name;
    const replicas = await m.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ namespace: CONTROLLER_NS, name: CONTROLLER_DEPLOY })
      .then((d) => (d.metadata?.deletionTimestamp === undefined ? (d.spec?.replicas ?? 1) : 0))
      .catch((e: unknown) => {
        if (statusOf(e) === 404) return 0;
        throw e;
      });
    if (replicas === 0 && m.controller.length > 0) {
      await stopSide(m.controller);
      m.controller = [];
      this.note(`${name}: AWS controller stopped`);
    }
    const helmFile = join(this.helmDir, `${name}.helm`);
    const helm = existsSync(helmFile) ? readFileSync(helmFile, 'utf8') : undefined;
    if (helm === undefined && m.agents.length > 0) {
      await stopSide(m.agents);
      m.agents = [];
      this.note(`${name}: our agents stopped (helm uninstall)`);
    }
    if (replicas > 0 && m.controller.length === 0) {
      m.controller = (await startSide('peer', [m.cluster], this.emu)).processes;
      this.note(`${name}: AWS controller started`);
    }
    if (helm !== undefined && m.agents.length === 0) {
      if (!helm.includes(`cluster.clusterId=${name}`))
        throw new Error(`helm in ${name} without cluster.clusterId=${name}: ${helm}`);
      m.agents = (await startSide('ours', [m.cluster], this.emu)).processes;
      this.note(`${name}: our agents started (${helm.trim()})`);
    }
  }

  private note(line: string): void {
    this.events.push(`${new Date().toISOString()} ${line}`);
    this.log(line);
  }

  processes(): BenchProcess[] {
    return this.managed.flatMap((m) => [...m.controller, ...m.agents]);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 100));
    await stopSide(this.processes());
  }
}
