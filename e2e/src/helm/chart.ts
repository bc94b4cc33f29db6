/**
 * The Helm chart (deploy/charts/cloudmap-mcs) installed for real on real-node clusters:
 * `helm install` with a values file written as a user would write it (`exportAgent.*`,
 * `importAgent.*`, `aws.*`), the agents' images built from the Dockerfiles (./images.ts), and
 * the Cloud Map emulator supplied like a private endpoint: `aws.cloudMapEndpoint` names an
 * address the pods reach (a relay on the node IP, ../nodes/relay.ts) and the credentials come
 * from a Secret through `extraEnv` (what a cluster without IRSA or Pod Identity does).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  dumpYaml,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import type { ClusterInfo } from '../cluster.js';
import { repoRoot } from '../paths.js';
import { waitFor } from '../wait.js';
import type { AgentImages, AgentName } from './images.js';

export const chartDir = (): string => join(repoRoot(), 'deploy', 'charts', 'cloudmap-mcs');

/** helm, built from the Go module proxy by deploy/tools/helm/build.sh and cached. */
export function helmBinary(): string {
  return execFileSync(join(repoRoot(), 'deploy', 'tools', 'helm', 'build.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

let helmPath: string | undefined;

export interface HelmRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs helm against one cluster, with helm's own homes in a throwaway directory. Asynchronous
 * (a child process), so callers can watch the cluster while `helm upgrade --wait` runs.
 */
export async function helm(
  kubeconfig: string,
  args: readonly string[],
  timeoutMs = 600_000,
): Promise<HelmRun> {
  helmPath ??= helmBinary();
  const home = mkdtempSync(join(tmpdir(), 'cloudmap-mcs-helm-'));
  try {
    return await new Promise<HelmRun>((resolve, reject) => {
      const child = spawn(helmPath!, [...args, '--kubeconfig', kubeconfig], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_DATA_HOME: join(home, 'data'),
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ status: code ?? -1, stdout, stderr });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function helmOk(kubeconfig: string, args: readonly string[]): Promise<string> {
  const res = await helm(kubeconfig, args);
  if (res.status !== 0)
    throw new Error(`helm ${args.join(' ')} exited ${res.status}:\n${res.stderr || res.stdout}`);
  return res.stdout;
}

/** The Secret holding the Cloud Map credentials, as a user creates it for a private endpoint. */
export const credentialsSecret = 'cloudmap-credentials';

export async function createCredentialsSecret(
  kc: KubeConfig,
  namespace: string,
  env: Readonly<Record<string, string>>,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const stringData = {
    AWS_ACCESS_KEY_ID: env['AWS_ACCESS_KEY_ID'] ?? '',
    AWS_SECRET_ACCESS_KEY: env['AWS_SECRET_ACCESS_KEY'] ?? '',
  };
  if (!stringData.AWS_ACCESS_KEY_ID || !stringData.AWS_SECRET_ACCESS_KEY)
    throw new Error('the Cloud Map environment has no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY');
  try {
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: credentialsSecret }, type: 'Opaque', stringData },
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

export interface ChartValuesOptions {
  readonly images: AgentImages;
  readonly exportAgent: boolean;
  readonly importAgent: boolean;
  /** `aws.cloudMapEndpoint`: an address the pods reach (the relay on the node IP). */
  readonly cloudMapEndpoint: string;
  readonly region: string;
  /** `importAgent.allowedCidrs`: the pod ranges of the clusters imported from. */
  readonly allowedCidrs: readonly string[];
  /** `importAgent.namespaces.allowed` (empty: every namespace but the denied ones). */
  readonly allowedNamespaces?: readonly string[];
  readonly replicas?: number;
  /** Further values merged over these (e.g. the demo's short periods). */
  readonly extra?: { exportAgent?: object; importAgent?: object; [k: string]: unknown } | undefined;
  /**
   * Shorter internal periods, per agent, as MCS_TEST_TIMINGS in its extraEnv (test only,
   * docs/contributing.md#test-timings): e.g. `{ importAgent: { pollSlowSeconds: 3 } }`.
   */
  readonly testTimings?:
    | {
        exportAgent?: Readonly<Record<string, number>>;
        importAgent?: Readonly<Record<string, number>>;
      }
    | undefined;
}

const secretEnv = (key: string) => ({
  name: key,
  valueFrom: { secretKeyRef: { name: credentialsSecret, key } },
});

/**
 * The values file a user would write for this cluster: images, region, endpoint, the
 * credentials Secret through extraEnv, the address allow-list. Cluster identity comes from the
 * ClusterProperties the harness created (cluster.createClusterProperties stays false).
 */
export function chartValues(o: ChartValuesOptions): Record<string, unknown> {
  const credentials = [secretEnv('AWS_ACCESS_KEY_ID'), secretEnv('AWS_SECRET_ACCESS_KEY')];
  const extraEnv = (timings: Readonly<Record<string, number>> | undefined) =>
    timings === undefined
      ? credentials
      : [...credentials, { name: 'MCS_TEST_TIMINGS', value: JSON.stringify(timings) }];
  const image = (agent: AgentName) => ({
    repository: o.images[agent].repository,
    tag: o.images[agent].tag,
  });
  const replicas = o.replicas ?? 2;
  return {
    ...o.extra,
    aws: { region: o.region, cloudMapEndpoint: o.cloudMapEndpoint },
    exportAgent: {
      enabled: o.exportAgent,
      image: image('export-agent'),
      replicas,
      extraEnv: extraEnv(o.testTimings?.exportAgent),
      ...o.extra?.exportAgent,
    },
    importAgent: {
      enabled: o.importAgent,
      image: image('import-agent'),
      replicas,
      extraEnv: extraEnv(o.testTimings?.importAgent),
      allowedCidrs: [...o.allowedCidrs],
      ...(o.allowedNamespaces !== undefined && o.allowedNamespaces.length > 0
        ? { namespaces: { allowed: [...o.allowedNamespaces] } }
        : {}),
      ...o.extra?.importAgent,
    },
  };
}

/** Writes values as YAML (what `helm install -f` reads) into `dir`; returns the path. */
export function writeValues(dir: string, name: string, values: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `# helm values for ${name} (written by the harness as a user would)\n${dumpYaml(values)}`,
  );
  return file;
}

export const releaseNamespace = 'cloudmap-mcs';

/** `helm install` (or `upgrade --install`), waiting until the agents' Deployments are ready. */
export function helmInstall(
  cluster: Pick<ClusterInfo, 'kubeconfig'>,
  release: string,
  valuesFile: string,
  verb: 'install' | 'upgrade' = 'install',
): Promise<string> {
  return helmOk(cluster.kubeconfig, [
    verb,
    release,
    chartDir(),
    '--namespace',
    releaseNamespace,
    '-f',
    valuesFile,
    '--wait',
    '--timeout',
    '5m',
  ]);
}

export function helmUninstall(
  cluster: Pick<ClusterInfo, 'kubeconfig'>,
  release: string,
): Promise<string> {
  return helmOk(cluster.kubeconfig, [
    'uninstall',
    release,
    '--namespace',
    releaseNamespace,
    '--wait',
    '--timeout',
    '3m',
  ]);
}

/** The chart's object names: `<release>-cloudmap-mcs-<agent>` (release name without "cloudmap-mcs"). */
export const agentFullname = (release: string, agent: AgentName): string =>
  `${release.includes('cloudmap-mcs') ? release : `${release}-cloudmap-mcs`}-${agent}`;

export const agentSelector = (release: string, agent: AgentName): string =>
  `app.kubernetes.io/instance=${release},app.kubernetes.io/component=${agent}`;

export interface AgentPod {
  readonly name: string;
  readonly ip: string;
  readonly node: string;
  /** Pod created → container started → Ready (ms since epoch; seconds resolution from the API). */
  readonly createdMs: number;
  readonly startedMs: number;
  readonly readyMs: number;
}

const readyCondition = (p: V1Pod) =>
  p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');

function agentPod(p: V1Pod): AgentPod {
  const ready = readyCondition(p);
  const started = p.status?.containerStatuses?.[0]?.state?.running?.startedAt;
  return {
    name: p.metadata?.name ?? '',
    ip: p.status?.podIP ?? '',
    node: p.spec?.nodeName ?? '',
    createdMs: new Date(p.metadata?.creationTimestamp ?? 0).getTime(),
    startedMs: new Date(started ?? 0).getTime(),
    readyMs: new Date(ready?.lastTransitionTime ?? 0).getTime(),
  };
}

/** The agent's pods that are Ready and not terminating, once there are `replicas` of them. */
export async function waitAgentPods(
  kc: KubeConfig,
  release: string,
  agent: AgentName,
  replicas: number,
  timeoutMs = 180_000,
): Promise<AgentPod[]> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    `${replicas} Ready pods of ${agent} (release ${release})`,
    async () => {
      const pods = await core.listNamespacedPod({
        namespace: releaseNamespace,
        labelSelector: agentSelector(release, agent),
      });
      const live = pods.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
      const ready = live.filter((p) => readyCondition(p) !== undefined);
      return ready.length === replicas && live.length === replicas
        ? ready.map(agentPod)
        : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** The holder of an agent's leader-election Lease (the pod name), or undefined. */
export async function leaseHolder(
  kc: KubeConfig,
  release: string,
  agent: AgentName,
): Promise<string | undefined> {
  try {
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({
      namespace: releaseNamespace,
      name: agentFullname(release, agent),
    });
    const holder = lease.spec?.holderIdentity;
    return holder === undefined || holder === null || holder === '' ? undefined : holder;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** The agent's Lease as stored (undefined when absent): holder, last renewal, duration. */
export async function readLease(
  kc: KubeConfig,
  release: string,
  agent: AgentName,
): Promise<
  | {
      holder: string;
      renewMs: number;
      durationSeconds: number;
    }
  | undefined
> {
  try {
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({
      namespace: releaseNamespace,
      name: agentFullname(release, agent),
    });
    return {
      holder: lease.spec?.holderIdentity ?? '',
      renewMs: new Date(lease.spec?.renewTime ?? 0).getTime(),
      durationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    };
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** A scratch directory for values files under the state directory. */
export function valuesDir(stateDir: string): string {
  const dir = join(stateDir, 'helm');
  mkdirSync(dir, { recursive: true });
  return dir;
}
