import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  bindWatches,
  ServiceExportApi,
  createControllerMetrics,
  exportAgentTags,
} from '@cloudmap-mcs/core';
import { StartupError, type AgentContext, type AgentRun } from '@cloudmap-mcs/core/agent';
import { isNotFound, leaderOnly, waitForCacheSync } from '@cloudmap-mcs/core/runtime';
import type { ExportAgentConfig } from './config.js';
import { createExportController } from './controller.js';
import { createKubeSources } from './kube/sources.js';
import { createKubeWriter } from './kube/writer.js';
import { createExportMetrics } from './metrics.js';
import { exportWatches } from './watches.js';

const CRD_HINT =
  'Install the CRDs first: kubectl apply -f deploy/crds/ (or the Helm chart with crds enabled).';

/**
 * A missing ServiceExport CRD is a clear exit, not a crash loop of watch errors. (A missing
 * ClusterProperty CRD is a not-ready state that names it: core's identity watcher.)
 */
export async function checkCrds(kubeConfig: KubeConfig): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await custom.listClusterCustomObject({ ...ServiceExportApi, limit: 1 });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const api = ServiceExportApi;
    throw new StartupError(
      `The ${api.plural}.${api.group} CRD (version ${api.version}) is not installed in this cluster. ${CRD_HINT}`,
      { cause: error },
    );
  }
}

/**
 * The export agent's own wiring on core's skeleton (docs/architecture.md#the-two-agents), in
 * order: the caches, the controller, then the watches (watches.ts) that feed its queue.
 * Caches sync before the Lease is sought, so a standby replica takes over with warm caches.
 */
export async function startExportAgent(ctx: AgentContext<ExportAgentConfig>): Promise<AgentRun> {
  const { config, logger, shutdown } = ctx;
  // Registered before the controller's (the order of /metrics).
  const metrics = createExportMetrics(ctx.registry, ctx.leaderRegistry);
  const sources = createKubeSources({
    kubeConfig: ctx.kubeConfig,
    identity: ctx.identity,
    logger: logger.child({ component: 'informers' }),
    clock: ctx.clock,
  });
  const controller = createExportController({
    sources,
    // No Kubernetes write once another replica may lead (ADR 0020).
    writer: leaderOnly(createKubeWriter(ctx.kubeConfig, logger, config.identity), ctx.leading),
    cloudMap: ctx.cloudMap,
    clock: ctx.clock,
    wallNow: Date.now,
    logger: logger.child({ controller: 'serviceexport' }),
    workers: config.workers,
    resyncMs: config.resyncSeconds * 1000,
    backgroundBudgetPerMinute: config.backgroundBudget,
    pendingRequeueMs: 1000,
    heartbeatPeriodMs: config.heartbeatSeconds * 1000,
    peerCheckMs: config.peerCheckSeconds * 1000,
    peerCheckBudgetPerSecond: config.peerCheckBudget,
    ...(config.changeFeed ? { feed: { minIntervalMs: config.feedIntervalSeconds * 1000 } } : {}),
    // deploy/iam's policies allow writes only to what carries this tag.
    tags: exportAgentTags(),
    ...(config.dns === undefined ? {} : { dns: config.dns }),
    podLabelAttributes: config.podLabelAttributes,
    metrics: createControllerMetrics(ctx.leaderRegistry),
    exportMetrics: metrics,
  });
  const unwatch = bindWatches(
    exportWatches(sources.watched),
    controller.enqueue,
    logger.child({ component: 'watches' }),
  );
  ctx.readiness.add('caches', () => {
    const waiting = sources.informers.filter((i) => !i.hasSynced()).map((i) => i.name);
    return waiting.length === 0
      ? { ok: true }
      : { ok: false, message: `waiting for ${waiting.join(', ')}` };
  });
  shutdown.onShutdown('controller', 20, () => controller.stop());
  shutdown.onShutdown('informers', 30, () => {
    unwatch();
    return sources.stop();
  });
  sources.start();
  await waitForCacheSync(sources.informers, shutdown.signal);
  logger.info('caches synced');
  return { lead: (signal) => controller.run(signal) };
}
