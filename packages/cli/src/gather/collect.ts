/**
 * The support bundle's contents: the agents (Deployment settings without secrets, the last
 * log lines and /metrics of each pod), the MCS objects of a namespace or of all, the Cloud Map
 * records of one service, and the doctor's findings. Every part that cannot be read is named
 * in errors.txt instead of failing the bundle.
 */
import type { CloudMapPort } from '@cloudmap-mcs/core';
import { derivedServiceName } from '@cloudmap-mcs/core';
import type { CheckResult } from '../doctor/result.js';
import { agentKind } from '../doctor/agents.js';
import type { GatherReader, McsList } from '../kube/gather-reader.js';
import type { KubeReader } from '../kube/reader.js';
import { toYaml } from '../kube/yaml.js';
import { redactEnv, sanitize } from './sanitize.js';
import type { TarEntry } from './tar.js';

export interface GatherDeps {
  kube: KubeReader;
  reader: GatherReader;
  cloudMap?: { port: CloudMapPort } | undefined;
  doctor: () => Promise<CheckResult[]>;
  /** MCS objects of this namespace only; all when absent. */
  namespace?: string | undefined;
  /** `namespace/name` whose Cloud Map records to include. */
  service?: { namespace: string; name: string } | undefined;
  tailLines: number;
  version: string;
  now: () => number;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function gatherBundle(deps: GatherDeps): Promise<TarEntry[]> {
  const root = `cloudmap-mcs-gather-${new Date(deps.now()).toISOString().replace(/[:.]/g, '-')}`;
  const entries: TarEntry[] = [];
  const errors: string[] = [];
  const add = (name: string, content: string): void => {
    entries.push({ name: `${root}/${name}`, content });
  };
  const yaml = (v: unknown) => toYaml(sanitize(v));
  async function part(what: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (e) {
      errors.push(`${what}: ${message(e)}`);
    }
  }

  await part('doctor', async () => add('doctor.yaml', yaml(await deps.doctor())));

  await part('agent Deployments', async () => {
    const agents = (await deps.kube.listDeployments()).filter((d) => agentKind(d) !== undefined);
    const one = async (d: (typeof agents)[number]) => {
      const dir = `agents/${d.namespace}/${d.name}`;
      // Literal env values only (parse.ts never resolves valueFrom), credential names redacted.
      add(`${dir}/deployment.yaml`, yaml({ ...d, env: redactEnv(d.env) }));
      const pods =
        Object.keys(d.selector).length === 0
          ? []
          : await deps.kube.listPods(d.namespace, d.selector);
      // Concurrently: each log or metrics call may wait for its timeout.
      await Promise.all(
        pods.map(async (p) => {
          add(`${dir}/${p.name}/pod.yaml`, yaml(p));
          const port = p.metricsPort;
          await Promise.all([
            ...p.containers.map((c) =>
              part(`logs of ${d.namespace}/${p.name}/${c}`, async () =>
                add(
                  `${dir}/${p.name}/${c}.log`,
                  await deps.reader.podLog(d.namespace, p.name, c, deps.tailLines),
                ),
              ),
            ),
            port === undefined
              ? errors.push(`metrics of ${d.namespace}/${p.name}: no metrics or health port`)
              : part(`metrics of ${d.namespace}/${p.name}`, async () =>
                  add(
                    `${dir}/${p.name}/metrics.txt`,
                    await deps.reader.podMetrics(d.namespace, p.name, port),
                  ),
                ),
          ]);
        }),
      );
    };
    await Promise.all(agents.map(one));
  });

  const lists: McsList[] = ['serviceexports', 'serviceimports', 'endpointslices'];
  for (const what of lists)
    await part(what, async () => {
      const objects = await deps.reader.list(what, deps.namespace);
      add(`mcs/${what}.yaml`, yaml({ items: objects }));
      if (what !== 'serviceimports') return;
      // The derived Services the import agent made for these imports.
      const services: unknown[] = [];
      for (const si of objects) {
        const m = (si['metadata'] ?? {}) as { namespace?: string; name?: string };
        if (m.namespace === undefined || m.name === undefined) continue;
        const svc = await deps.reader.getService(
          m.namespace,
          derivedServiceName(m.namespace, m.name),
        );
        if (svc !== undefined) services.push(svc);
      }
      add('mcs/derived-services.yaml', yaml({ items: services }));
    });

  const svc = deps.service;
  if (svc !== undefined)
    await part(`Cloud Map records of ${svc.namespace}/${svc.name}`, async () => {
      if (deps.cloudMap === undefined)
        throw new Error('no Cloud Map endpoint or region configured');
      const found = await deps.cloudMap.port.discoverInstances(svc.namespace, svc.name);
      add(`cloudmap/${svc.namespace}/${svc.name}.yaml`, yaml(found));
    });

  add(
    'README.txt',
    [
      `cloudmap-mcs gather ${deps.version}, context ${deps.kube.context} (${deps.kube.server})`,
      `taken ${new Date(deps.now()).toISOString()}; MCS objects of ${deps.namespace ?? 'every namespace'}; last ${deps.tailLines} log lines per container`,
      'No Secret is read; env values named like credentials are redacted.',
      '',
    ].join('\n'),
  );
  add('errors.txt', errors.length === 0 ? 'none\n' : errors.sort().join('\n') + '\n');
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}
