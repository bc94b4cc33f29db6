/**
 * One ServiceAccount per benchmarked process kind, bound to cluster-admin, so the API
 * server's audit log tells whose write each request was (the control plane writes too).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ignoreAlreadyExists, serviceAccountKubeconfig } from '../resources.js';
import { ensureNamespace } from './workload.js';

/** Where our agents keep their Leases by default; the identities live there too. */
export const systemNamespace = 'cloudmap-mcs-system';

export type ProcessKind = 'export-agent' | 'import-agent' | 'aws-controller';

export const usernameOf = (kind: ProcessKind): string =>
  `system:serviceaccount:${systemNamespace}:bench-${kind}`;

/** Creates the account and its binding; writes a kubeconfig for it; returns the path. */
export async function identityKubeconfig(
  kc: KubeConfig,
  kind: ProcessKind,
  dir: string,
): Promise<string> {
  await ensureNamespace(kc, systemNamespace);
  const name = `bench-${kind}`;
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccount({ namespace: systemNamespace, body: { metadata: { name } } })
    .catch(ignoreAlreadyExists);
  await kc
    .makeApiClient(RbacAuthorizationV1Api)
    .createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'cluster-admin',
        },
        subjects: [{ kind: 'ServiceAccount', name, namespace: systemNamespace }],
      },
    })
    .catch(ignoreAlreadyExists);
  const yaml = await serviceAccountKubeconfig(kc, {
    namespace: systemNamespace,
    serviceAccount: name,
    expirationSeconds: 24 * 3600,
  });
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${kind}.kubeconfig`);
  writeFileSync(path, yaml, { mode: 0o600 });
  return path;
}
