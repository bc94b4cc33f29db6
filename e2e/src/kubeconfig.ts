import { writeFileSync } from 'node:fs';
import { dumpYaml, KubeConfig } from '@kubernetes/client-node';

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
