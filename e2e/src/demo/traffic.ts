/**
 * On real nodes, the demo shows what users buy the project for: from a pod in c2, the
 * clusterset name resolves (through CoreDNS with the sample Corefile) to c2's clusterset IP,
 * and requests through it are answered by pods in c1 and in c2; then c1 scales to 0 and the
 * answers move to c2. On dual-stack clusters this is shown for each family: A and AAAA, and
 * requests over IPv4 and over IPv6. Everything is measured from inside the pod.
 */
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { execInPod } from '../nodes/exec.js';
import { scaleDeployment, startClientPod } from '../nodes/workloads.js';
import { waitFor } from '../wait.js';

export type TrafficFamily = 'ipv4' | 'ipv6';

/** What one family showed: the answer to A (AAAA) and the requests over that family. */
export interface FamilyTraffic {
  readonly family: TrafficFamily;
  readonly resolvedTo: string[];
  readonly clustersetIp: string;
  /** Median DNS answer time from the pod (ms). */
  readonly dnsMs: number;
  /** Median request time through the clusterset IP from the pod (ms). */
  readonly requestMs: number;
  readonly requests: number;
  /** Answers per cluster: pod name -> count. */
  readonly answers: Record<string, Record<string, number>>;
}

export interface TrafficReport {
  readonly fromCluster: string;
  readonly name: string;
  /** One per family the ServiceImport has a clusterset IP of (primary first). */
  readonly families: readonly FamilyTraffic[];
  /** Seconds from scaling c1 to 0 until every answer came from c2 (undefined: not measured). */
  readonly failoverSeconds?: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

/** Pod name -> cluster, for the Deployment's pods in every cluster. */
async function podClusters(
  clusters: readonly { name: string; kc: KubeConfig }[],
  namespace: string,
): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  for (const c of clusters) {
    const pods = await c.kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace });
    for (const p of pods.items) m.set(p.metadata?.name ?? '', c.name);
  }
  return m;
}

const rrType = (f: TrafficFamily): string => (f === 'ipv4' ? 'A' : 'AAAA');
// One line per request: "<ms> <hostname>"; date +%s%N is busybox's nanosecond clock.
const requestLoop = (url: string, f: TrafficFamily, n: number): string =>
  `i=0; while [ $i -lt ${n} ]; do s=$(date +%s%N); h=$(curl -s ${f === 'ipv4' ? '-4' : '-6'} -m 3 ${url} 2>/dev/null); e=$(date +%s%N); echo "$(( (e - s) / 1000 )) $h"; i=$((i+1)); done`;
const dnsLoop = (name: string, f: TrafficFamily, n: number): string =>
  `i=0; while [ $i -lt ${n} ]; do s=$(date +%s%N); nslookup -type=${rrType(f)} ${name} >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); i=$((i+1)); done`;

export async function probeTraffic(o: {
  clusters: readonly { name: string; kc: KubeConfig }[];
  from: { name: string; kc: KubeConfig };
  namespace: string;
  service: string;
  requests: number;
  /** Scale the first cluster's Deployment to 0 and time the move of the answers. */
  failover: boolean;
  say: (m: string) => void;
}): Promise<TrafficReport> {
  const { from, namespace, service } = o;
  await startClientPod(from.kc, namespace, 'demo-client');
  const sh = async (script: string): Promise<string> =>
    (
      await execInPod(
        from.kc,
        { namespace, pod: 'demo-client', container: 'client' },
        ['sh', '-c', script],
        120_000,
      )
    ).stdout;
  const name = `${service}.${namespace}.svc.clusterset.local.`;
  const si = (await from.kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'multicluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'serviceimports',
    namespace,
    name: service,
  })) as { spec?: { ips?: string[] } };
  const url = `http://${name.slice(0, -1)}/hostname`;
  const owner = await podClusters(o.clusters, namespace);
  const families: FamilyTraffic[] = [];
  for (const clustersetIp of si.spec?.ips ?? []) {
    const family: TrafficFamily = clustersetIp.includes(':') ? 'ipv6' : 'ipv4';
    const resolvedTo = await waitFor(
      `${name} (${rrType(family)}) resolving from a pod in ${from.name}`,
      async () => {
        const out = await sh(`nslookup -type=${rrType(family)} ${name}`);
        const answer = out
          .split(/Name:\s/)
          .slice(1)
          .join('\n');
        const ips = [...answer.matchAll(/Address:\s*([0-9a-f.:]+)\s*$/gm)].map((m) => m[1]!);
        return ips.includes(clustersetIp) ? ips : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const dnsMs = median(
      (await sh(dnsLoop(name, family, 10)))
        .trim()
        .split('\n')
        .map((l) => Number(l) / 1000),
    );
    const answers: Record<string, Record<string, number>> = {};
    const lines = (await sh(requestLoop(url, family, o.requests))).trim().split('\n');
    const times: number[] = [];
    for (const line of lines) {
      const [us, host = ''] = line.split(' ');
      if (host === '') continue;
      times.push(Number(us) / 1000);
      const cluster = owner.get(host) ?? 'unknown';
      answers[cluster] ??= {};
      answers[cluster][host] = (answers[cluster][host] ?? 0) + 1;
    }
    families.push({
      family,
      resolvedTo,
      clustersetIp,
      dnsMs,
      requestMs: median(times),
      requests: times.length,
      answers,
    });
  }
  let failoverSeconds: number | undefined;
  if (o.failover) {
    const first = o.clusters[0]!;
    o.say(
      `scaling ${first.name}'s ${service} to 0; requests from ${from.name} until all answers come from ${from.name}`,
    );
    const apps = first.kc.makeApiClient(AppsV1Api);
    const replicas =
      (await apps.readNamespacedDeployment({ namespace, name: service })).spec?.replicas ?? 1;
    const t0 = Date.now();
    await scaleDeployment(first.kc, namespace, service, 0);
    const local = new Set([...owner].filter(([, c]) => c === from.name).map(([p]) => p));
    await waitFor(
      `all answers from ${from.name}`,
      async () => {
        const out = await sh(requestLoop(url, families[0]?.family ?? 'ipv4', 5));
        const hosts = out
          .trim()
          .split('\n')
          .map((l) => l.split(' ')[1] ?? '');
        return hosts.length === 5 && hosts.every((h) => local.has(h));
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    failoverSeconds = (Date.now() - t0) / 1000;
    // Back as the sample has it, for whoever explores the running demo.
    await scaleDeployment(first.kc, namespace, service, replicas);
  }
  return {
    fromCluster: from.name,
    name,
    families,
    ...(failoverSeconds !== undefined ? { failoverSeconds } : {}),
  };
}

/** The summary lines of a traffic report. */
export function renderTraffic(t: TrafficReport): string[] {
  const out = [
    `From a pod in ${t.fromCluster} (real nodes: kubelet, containerd, kube-proxy, CoreDNS):`,
  ];
  const dual = t.families.length > 1;
  for (const f of t.families) {
    const over = dual ? ` over ${f.family === 'ipv4' ? 'IPv4' : 'IPv6'}` : '';
    out.push(
      `  ${t.name} ${dual ? `${rrType(f.family)} ` : ''}resolves to ${f.resolvedTo.join(', ')} (${t.fromCluster}'s clusterset IP ${f.clustersetIp}); DNS answer ${f.dnsMs.toFixed(1)} ms (median)`,
      `  ${f.requests} requests${over} through the clusterset IP, ${f.requestMs.toFixed(1)} ms each (median), answered by:`,
    );
    for (const [cluster, pods] of Object.entries(f.answers).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      const total = Object.values(pods).reduce((a, b) => a + b, 0);
      out.push(
        `    ${cluster}: ${total}  (${Object.entries(pods)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([p, n]) => `${p} ×${n}`)
          .join(', ')})`,
      );
    }
  }
  if (t.failoverSeconds !== undefined)
    out.push(
      `  c1 scaled to 0: every answer came from ${t.fromCluster} after ${t.failoverSeconds.toFixed(1)} s`,
    );
  return out;
}
