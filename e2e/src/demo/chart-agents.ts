/**
 * The demo's agents on real nodes: the Helm chart installed into both clusters (both agents,
 * a full member cluster each), from the images the Dockerfiles build, with the values a user
 * would write. The Cloud Map emulator is the private endpoint (a relay on each node IP, the
 * credentials in a Secret); the demo's short periods are ordinary chart values. A Prometheus
 * per cluster (e2e/src/prometheus.ts, as the real-node alert test runs it) scrapes the agents
 * and evaluates the chart's alerts; the summary prints where.
 */
import { join } from 'node:path';
import type { Clusterset } from '../clusterset.js';
import { loadKubeconfig } from '../kubeconfig.js';
import {
  chartValues,
  createCredentialsSecret,
  helmInstall,
  releaseNamespace,
  valuesDir,
  waitAgentPods,
  writeValues,
} from '../helm/chart.js';
import { buildAgentImages, importAgentImages } from '../helm/images.js';
import { relayHostPortToNode } from '../nodes/relay.js';
import { EXTERNAL_TASK_CIDRS } from './external.js';
import { chartRuleGroups, startPrometheus } from '../prometheus.js';

export const DEMO_RELEASE = 'cloudmap-mcs';

export interface ChartAgents {
  /** Per cluster: the values file installed and the agents' pods. */
  readonly clusters: { cluster: string; valuesFile: string; pods: string[]; prometheus: string }[];
}

export async function installChartAgents(
  cs: Clusterset,
  env: Readonly<Record<string, string>>,
  say: (m: string) => void,
  check: () => void,
): Promise<ChartAgents> {
  say('building the agent images from Dockerfile.export/.import with buildah (cached by content)');
  const images = buildAgentImages(say);
  const port = cs.state.emulator?.port;
  if (port === undefined) throw new Error('the Cloud Map emulator did not start');
  const out: ChartAgents['clusters'] = [];
  for (const c of cs.clusters) {
    check();
    const ms = importAgentImages(c, images);
    const relay = await relayHostPortToNode({
      plan: c.realNode!,
      port,
      name: 'cloudmap',
      detached: true,
    });
    const kc = loadKubeconfig(c.kubeconfig);
    await createCredentialsSecret(kc, releaseNamespace, env);
    const values = chartValues({
      images,
      exportAgent: true,
      importAgent: true,
      cloudMapEndpoint: relay.url,
      region: env['AWS_REGION'] ?? 'us-east-1',
      // The clusters' pod ranges, and the subnet of the demo's ECS-style tasks (external.ts):
      // what a user lists for the clusters and the non-Kubernetes workloads it imports.
      allowedCidrs: [
        ...cs.clusters.flatMap((x) => x.network.podCidr.split(',')),
        ...EXTERNAL_TASK_CIDRS,
      ],
      replicas: 1,
      // The demo's short periods (test-only timings, docs/contributing.md#test-timings).
      testTimings: {
        exportAgent: { heartbeatSeconds: 10 },
        importAgent: { pollSlowSeconds: 3, pollResyncSeconds: 600 },
      },
      extra: {
        exportAgent: {
          // The demo namespace becomes a private DNS namespace: hello.demo resolves through
          // the emulator's DNS (docs/dns-namespaces.md). The emulator accepts any VPC id.
          dns: { records: true, ttlSeconds: 5, namespaceVpc: 'vpc-demo' },
        },
        importAgent: { poll: { fastSeconds: 1 } },
      },
    });
    const valuesFile = writeValues(valuesDir(cs.state.stateDir), `${c.name}-values`, values);
    say(
      `${c.name}: images imported (${(ms / 1000).toFixed(1)} s); Cloud Map for pods at ${relay.url}; helm install ${DEMO_RELEASE} -n ${releaseNamespace} -f ${valuesFile}`,
    );
    const t0 = Date.now();
    await helmInstall(c, DEMO_RELEASE, valuesFile);
    const pods = [
      ...(await waitAgentPods(kc, DEMO_RELEASE, 'export-agent', 1)),
      ...(await waitAgentPods(kc, DEMO_RELEASE, 'import-agent', 1)),
    ];
    say(
      `${c.name}: both agents Ready as pods in ${((Date.now() - t0) / 1000).toFixed(1)} s (${pods
        .map((p) => `${p.name} created→Ready ${((p.readyMs - p.createdMs) / 1000).toFixed(0)} s`)
        .join(', ')})`,
    );
    const prom = await startPrometheus({
      cluster: c.name,
      kc,
      kubeconfigPath: c.kubeconfig,
      namespace: releaseNamespace,
      release: DEMO_RELEASE,
      ruleGroups: await chartRuleGroups(c.kubeconfig, DEMO_RELEASE, releaseNamespace, valuesFile),
      dir: join(cs.state.stateDir, 'prometheus'),
      detached: true,
    });
    say(`${c.name}: Prometheus at ${prom.url} (the chart's alerts; log ${prom.logFile})`);
    out.push({
      cluster: c.name,
      valuesFile,
      pods: pods.map((p) => p.name),
      prometheus: prom.url,
    });
  }
  return { clusters: out };
}
