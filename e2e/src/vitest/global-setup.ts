// Vitest globalSetup of the `integration` project: one clusterset per run, shared by every
// suite, which isolate themselves by namespace (see createNamespace).
//
//   MCS_E2E_KUBECONFIGS=a,b   use these clusters (kind, EKS, ...) instead of starting any
//   MCS_E2E_STATE=<dir>       use the running clusterset of `make clusterset-up STATE=<dir>`
//   MCS_E2E_CLUSTERS=N        clusters to start (default 2)
//   MCS_E2E_NODES=fake|real   kwok fake nodes (default) or one real node per cluster; real
//                             fails the run when the machine cannot start them
//   MCS_E2E_IP_FAMILY=ipv4|ipv6|dual   IP families of the started clusters (default ipv4;
//                             fake and real nodes)
//   MCS_E2E_EMULATOR=auto|required|off   Cloud Map emulator (default: auto for harness
//                             clusters, off for MCS_E2E_KUBECONFIGS)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  describeLeftovers,
  loadClusterset,
  reapOrphanedClustersets,
  startClusterset,
  stopClusterset,
  teardownClean,
} from '../clusterset.js';
import { cloudMapEnv, startInProcessEmulator, type EmulatorMode } from '../emulator.js';
import { stderrProgress } from '../log.js';
import { parseIpFamilyMode } from '../network.js';
import type { E2eContext } from './context.js';
import './context.js';

/** State directories of test runs (the harness suite uses the same prefix). */
const stateDirPrefix = 'cloudmap-mcs-e2e-';

export default async function setup(
  project: TestProject,
): Promise<(() => Promise<void>) | undefined> {
  return setupClusterset(project, process.env);
}

/** The setup with an explicit environment (the `realnodes` project forces MCS_E2E_NODES=real). */
export async function setupClusterset(
  project: TestProject,
  env: Readonly<Record<string, string | undefined>>,
): Promise<(() => Promise<void>) | undefined> {
  const external = env['MCS_E2E_KUBECONFIGS'];
  if (external !== undefined && external.trim() !== '') {
    const kubeconfigs = external
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .map((p) => resolve(p));
    // External clusters: Cloud Map is whatever the environment says (real AWS by default),
    // unless MCS_E2E_EMULATOR asks for the emulator (make e2e-kind does).
    const emulator = await startInProcessEmulator(
      (env['MCS_E2E_EMULATOR'] ?? 'off') as EmulatorMode,
      stderrProgress,
    );
    const cloudMapEndpoint = emulator?.url ?? env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'];
    provide(project, {
      kubeconfigs,
      clusterNames: kubeconfigs.map((p) => basename(p).replace(/\.(kubeconfig|ya?ml|conf)$/, '')),
      stateDir: null,
      cloudMapEnv:
        emulator !== undefined
          ? cloudMapEnv(emulator.url, emulator.dnsAddress)
          : cloudMapEndpoint !== undefined
            ? { AWS_ENDPOINT_URL_SERVICEDISCOVERY: cloudMapEndpoint }
            : null,
      external: true,
      nodes: 'real',
    });
    return emulator !== undefined ? () => emulator.stop() : undefined;
  }

  const reuse = env['MCS_E2E_STATE'];
  if (reuse !== undefined && reuse.trim() !== '') {
    const state = loadClusterset(reuse);
    provide(project, {
      kubeconfigs: state.clusters.map((c) => c.kubeconfig),
      clusterNames: state.clusters.map((c) => c.name),
      stateDir: state.stateDir,
      cloudMapEnv: state.cloudMapEnv ?? null,
      external: false,
      nodes: state.clusters.every((c) => c.nodes === 'real') ? 'real' : 'fake',
    });
    return undefined;
  }

  for (const dir of await reapOrphanedClustersets(tmpdir(), stateDirPrefix)) {
    stderrProgress(`stopped the clusterset of an earlier run that died: ${dir}`);
  }
  const stateDir = mkdtempSync(join(tmpdir(), stateDirPrefix));
  const nodes = nodesMode(env['MCS_E2E_NODES']);
  const clusterset = await startClusterset({
    nodes,
    stateDir,
    clusters: Number(env['MCS_E2E_CLUSTERS'] ?? '2'),
    ipFamily: parseIpFamilyMode(env['MCS_E2E_IP_FAMILY']),
    emulator: (env['MCS_E2E_EMULATOR'] ?? 'auto') as EmulatorMode,
    detached: false,
    progress: stderrProgress,
  }).catch(async (err: unknown) => {
    await stopClusterset(stateDir);
    throw err;
  });
  provide(project, {
    kubeconfigs: clusterset.clusters.map((c) => c.kubeconfig),
    clusterNames: clusterset.clusters.map((c) => c.name),
    stateDir,
    cloudMapEnv: clusterset.state.cloudMapEnv ?? null,
    external: false,
    nodes,
  });
  return async () => {
    const report = await clusterset.stop();
    if (!teardownClean(report)) {
      // Keep the state (logs, pid files) for inspection.
      throw new Error(
        `clusterset teardown left: ${describeLeftovers(report).join('; ')} (state kept in ${stateDir})`,
      );
    }
    rmSync(stateDir, { recursive: true, force: true });
  };
}

function nodesMode(value: string | undefined): 'fake' | 'real' {
  if (value === undefined || value === '' || value === 'fake') return 'fake';
  if (value === 'real') return 'real';
  throw new Error(`MCS_E2E_NODES must be fake or real, got ${value}`);
}

function provide(project: TestProject, context: E2eContext): void {
  project.provide('mcsE2e', context);
}
