import { writeFileSync } from 'node:fs';
import { dumpYaml, KubeConfig, loadYaml } from '@kubernetes/client-node';

export interface KubeconfigSpec {
  readonly name: string;
  readonly server: string;
  /** PEM bundle that verifies the API server's serving certificate. */
  readonly caPem: string;
  readonly user: string;
  readonly token: string;
  readonly namespace?: string;
}

/** A kubeconfig document with one cluster, one user (bearer token) and one current context. */
export function kubeconfigYaml(spec: KubeconfigSpec): string {
  return dumpYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: spec.name,
        cluster: {
          server: spec.server,
          'certificate-authority-data': Buffer.from(spec.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: spec.user, user: { token: spec.token } }],
    contexts: [
      {
        name: spec.name,
        context: {
          cluster: spec.name,
          user: spec.user,
          ...(spec.namespace !== undefined ? { namespace: spec.namespace } : {}),
        },
      },
    ],
    'current-context': spec.name,
  });
}

export function writeKubeconfig(path: string, spec: KubeconfigSpec): void {
  writeFileSync(path, kubeconfigYaml(spec), { mode: 0o600 });
}

export function loadKubeconfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

interface KubeconfigDoc {
  clusters?: { name: string }[];
  users?: { name: string }[];
  contexts?: { name: string }[];
}

/**
 * One kubeconfig holding the clusters, users and contexts of several (each harness kubeconfig
 * has one context named after its cluster), for tools that take `--contexts=c1,c2`. The first
 * document's context is the current one. Duplicate names are refused: they would silently
 * point a context at another cluster's credentials.
 */
export function mergeKubeconfigYaml(docs: readonly string[]): string {
  const parsed = docs.map((d) => loadYaml<KubeconfigDoc & { 'current-context'?: string }>(d));
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: parsed.flatMap((d) => d.clusters ?? []),
    users: parsed.flatMap((d) => d.users ?? []),
    contexts: parsed.flatMap((d) => d.contexts ?? []),
    'current-context': parsed[0]?.['current-context'] ?? '',
  };
  for (const key of ['clusters', 'users', 'contexts'] as const) {
    const names = merged[key].map((e) => e.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw new Error(`cannot merge kubeconfigs: two ${key} named ${dup}`);
  }
  return dumpYaml(merged);
}
