import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { clusterPropertyApi, realClock, ServiceExportApi, type Logger } from '@cloudmap-mcs/core';
import {
  createCloudMapClient,
  createCloudMapMetrics,
  createSdkCloudMapPort,
  createServiceDiscoveryClient,
} from '@cloudmap-mcs/core/cloudmap';
import {
  createChecks,
  createKubeLeaseStore,
  createLeaderElector,
  isNotFound,
  startHealthServer,
  waitForCacheSync,
  type Shutdown,
} from '@cloudmap-mcs/core/runtime';
import type { ExportAgentConfig } from './config.js';
import { createExportController, type ExportController } from './controller.js';
import { createKubeSources } from './kube/sources.js';
import { createKubeWriter } from './kube/writer.js';
import { createExportMetrics } from './metrics.js';

/** A start-up problem the operator must fix; main.ts prints it and exits 2. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

const CRD_HINT =
  'Install the CRDs first: kubectl apply -f deploy/crds/ (or the Helm chart with crds enabled).';

/** Missing CRDs are a clear exit, not a crash loop of watch errors. */
async function checkCrds(kubeConfig: KubeConfig): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  for (const api of [ServiceExportApi, clusterPropertyApi('v1beta1')]) {
    try {
      await custom.listClusterCustomObject({ ...api, limit: 1 });
    } catch (error) {
      if (isNotFound(error)) {
        throw new StartupError(
          `The ${api.plural}.${api.group} CRD (version ${api.version}) is not installed in this cluster. ${CRD_HINT}`,
        );
      }
      throw error;
    }
  }
}

export interface AgentEnvironment {
  /** AWS_ENDPOINT_URL_SERVICEDISCOVERY, when the flag is not given. */
  endpointFromEnv?: string | undefined;
}

/** Wires the export agent (DESIGN.md §2–§6) and runs it until `shutdown`. */
export async function runExportAgent(
  config: ExportAgentConfig,
  environment: AgentEnvironment,
  logger: Logger,
  shutdown: Shutdown,
): Promise<void> {
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig !== undefined) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromDefault();
  await checkCrds(kubeConfig);

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createExportMetrics(registry);
  const endpoint = config.cloudMapEndpoint ?? environment.endpointFromEnv;
  const sdk = createServiceDiscoveryClient({
    ...(config.region === undefined ? {} : { region: config.region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(config.assumeRoleArn === undefined
      ? {}
      : {
          assumeRole: {
            roleArn: config.assumeRoleArn,
            sessionName: 'cloudmap-mcs-export-agent',
            ...(config.assumeRoleExternalId === undefined
              ? {}
              : { externalId: config.assumeRoleExternalId }),
          },
        }),
  });
  const writeLimit = {
    perSecond: config.registerRatePerSecond,
    burst: config.registerRatePerSecond * 2,
  };
  const client = createCloudMapClient(createSdkCloudMapPort(sdk), {
    logger: logger.child({ component: 'cloudmap' }),
    metrics: createCloudMapMetrics(registry),
    rateLimits: { registerInstance: writeLimit, deregisterInstance: writeLimit },
  });

  const sources = createKubeSources({
    kubeConfig,
    flags: { clusterId: config.clusterId, clustersetId: config.clustersetId },
    logger: logger.child({ component: 'informers' }),
    clock: realClock,
    // Events arrive only after sources.start(), below, once `controller` exists.
    enqueue: (key) => (key === undefined ? controller.enqueueAll() : controller.enqueue(key)),
  });
  const controller: ExportController = createExportController({
    sources,
    writer: createKubeWriter(kubeConfig, logger, config.podName),
    cloudMap: client,
    operations: client.operations,
    clock: realClock,
    wallNow: Date.now,
    logger: logger.child({ controller: 'serviceexport' }),
    workers: config.workers,
    resyncMs: config.resyncSeconds * 1000,
    pendingRequeueMs: 1000,
    heartbeatPeriodMs: config.heartbeatSeconds * 1000,
    peerCheckMs: config.peerCheckSeconds * 1000,
    peerCheckBudgetPerSecond: config.peerCheckBudget,
    onPeerChange: () => metrics.peerChange(),
    tags: { 'cloudmap-mcs:managed-by': 'cloudmap-mcs-export-agent' },
    ...(config.dns === undefined ? {} : { dns: config.dns }),
    podLabelAttributes: config.podLabelAttributes,
    onReconcile: (outcome, ms) => {
      metrics.reconcile(outcome, ms);
      metrics.exports(controller.reconciler.exportedCount());
    },
    onQueueDepth: (d) => metrics.queueDepth(d),
  });

  const liveness = createChecks();
  liveness.set('process', true);
  const readiness = createChecks();
  readiness.add('caches', () => {
    const waiting = sources.informers.filter((i) => !i.hasSynced()).map((i) => i.name);
    return waiting.length === 0
      ? { ok: true }
      : { ok: false, message: `waiting for ${waiting.join(', ')}` };
  });
  readiness.add('identity', () => {
    const r = sources.identityResolution();
    return r.ok ? { ok: true } : { ok: false, message: r.message };
  });
  const health = await startHealthServer({
    port: config.healthPort,
    registry,
    liveness,
    readiness,
    logger,
  });

  const elector = config.leaderElect
    ? createLeaderElector({
        store: createKubeLeaseStore(kubeConfig, config.leaseNamespace, config.leaseName),
        identity: config.podName,
        leaseDurationMs: config.leaseDurationSeconds * 1000,
        renewDeadlineMs: config.renewDeadlineSeconds * 1000,
        retryPeriodMs: config.retryPeriodSeconds * 1000,
        logger,
        onStartedLeading: () => void runController(),
        // Exit (non-zero) so the Deployment restarts a fresh replica that campaigns again,
        // instead of leaving a process that neither leads nor exits.
        onStoppedLeading: () => void shutdown.shutdown('lost leadership', 1),
      })
    : undefined;
  let running: Promise<void> | undefined;
  const runController = (): Promise<void> => {
    running ??= controller.run().catch((error: unknown) => {
      logger.error('controller stopped', { err: error });
      void shutdown.shutdown('controller failed');
    });
    return running;
  };

  shutdown.onShutdown('leader election', 10, () => elector?.stop());
  shutdown.onShutdown('controller', 20, () => controller.stop());
  shutdown.onShutdown('informers', 30, () => sources.stop());
  shutdown.onShutdown('cloud map client', 40, () => client.close());
  shutdown.onShutdown('health server', 50, () => health.close());

  sources.start();
  await waitForCacheSync(sources.informers, shutdown.signal);
  logger.info('caches synced');
  if (elector !== undefined) await elector.run(shutdown.signal);
  else await runController();
}
