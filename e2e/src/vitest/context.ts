/** What the integration globalSetup hands to every suite (vitest `provide`/`inject`). */
export interface E2eContext {
  /** Admin kubeconfig paths, one per cluster, in cluster order (c1, c2, ...). */
  readonly kubeconfigs: readonly string[];
  /** Cluster names (c1, c2, ... for harness clusters; the file names for external ones). */
  readonly clusterNames: readonly string[];
  /** State directory of the harness clusterset; null for external clusters. */
  readonly stateDir: string | null;
  /** AWS SDK environment for the Cloud Map endpoint (the emulator); null when none runs. */
  readonly cloudMapEnv: Readonly<Record<string, string>> | null;
  /** True when the clusters came from MCS_E2E_KUBECONFIGS (kind, EKS, ...), not the harness. */
  readonly external: boolean;
  /** 'real' when the clusters run real nodes (MCS_E2E_NODES=real): pods run, DNS answers. */
  readonly nodes: 'fake' | 'real';
}

declare module 'vitest' {
  export interface ProvidedContext {
    mcsE2e: E2eContext;
  }
}
