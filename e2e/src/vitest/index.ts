// Helpers for integration suites: `import { e2eClusters } from '@cloudmap-mcs/e2e/vitest'`.
import { inject } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeconfig } from '../kubeconfig.js';
import { createNamespace, type TestNamespace } from '../namespaces.js';
import type { E2eContext } from './context.js';
import './context.js';

export type { E2eContext } from './context.js';

export interface E2eCluster {
  readonly name: string;
  readonly kubeconfigPath: string;
  readonly kc: KubeConfig;
}

/** The run's clusters (harness or external) and Cloud Map environment. */
export function e2eContext(): E2eContext {
  return inject('mcsE2e');
}

export function e2eClusters(): E2eCluster[] {
  const ctx = e2eContext();
  return ctx.kubeconfigs.map((path, i) => ({
    name: ctx.clusterNames[i] ?? `cluster-${i + 1}`,
    kubeconfigPath: path,
    kc: loadKubeconfig(path),
  }));
}

/** A fresh namespace with the same name in every cluster of the run. */
export function e2eNamespace(
  prefix: string,
  clusters: readonly E2eCluster[] = e2eClusters(),
): Promise<TestNamespace> {
  return createNamespace(
    clusters.map((c) => c.kc),
    prefix,
  );
}
