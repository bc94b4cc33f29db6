#!/usr/bin/env node
import { hostname } from 'node:os';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { hideBin } from 'yargs/helpers';
import {
  createAddressPolicy,
  createLocalAddresses,
  LABEL_MCS_SERVICE_NAME,
  logFields,
  realClock,
} from '@cloudmap-mcs/core';
import {
  createCloudMapClient,
  createCloudMapMetrics,
  createSdkCloudMapPort,
  createServiceDiscoveryClient,
} from '@cloudmap-mcs/core/cloudmap';
import {
  createChecks,
  createClusterIdentityWatcher,
  createEventRecorder,
  createKubeLeaseStore,
  createLeaderElector,
  createLogger,
  createShutdown,
  kubeClusterPropertySource,
  kubeEventSink,
  startHealthServer,
} from '@cloudmap-mcs/core/runtime';
import { ConfigError, parseConfig, type ImportAgentConfig } from './config.js';
import { createImportController, type ImportController } from './controller.js';
import { startImportInformers } from './k8s/informers.js';
import { createKubeSources } from './k8s/kube-sources.js';
import { createKubeWriter } from './k8s/kube-writer.js';
import { createKubeLocalAddressReader, createLocalAddressWatch } from './k8s/local-addresses.js';
import { createImportMetrics } from './metrics.js';
import { startExternalImports } from './external/wire.js';
import { LABEL_MANAGED_BY, MANAGED_BY } from './reconcile/k8s-types.js';
import { SLICE_MANAGED_BY } from './reconcile/reconciler.js';

/**
 * The import agent process: reads Cloud Map, writes ServiceImports, derived Services and
 * EndpointSlices in this cluster. Never writes to Cloud Map. The only place that reads
 * process.env and argv.
 */
async function main(): Promise<void> {
  let config: ImportAgentConfig;
  try {
    config = parseConfig(hideBin(process.argv), process.env, hostname());
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    defaultFields: { [logFields.agent]: 'import-agent' },
  });
  logger.info('starting', { [logFields.config]: { ...config } });

  const kc = new KubeConfig();
  if (config.kubeconfig !== undefined) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();

  const shutdown = createShutdown({ logger });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const liveness = createChecks();
  const readiness = createChecks();
  liveness.set('process', true);
  const health = await startHealthServer({
    port: config.healthPort,
    host: config.bindAddress,
    registry,
    liveness,
    readiness,
    logger,
  });
  shutdown.onShutdown('health server', 50, () => health.close());
  if (config.metricsPort !== config.healthPort) {
    const metricsServer = await startHealthServer({
      port: config.metricsPort,
      host: config.bindAddress,
      registry,
      liveness,
      readiness,
      logger,
    });
    shutdown.onShutdown('metrics server', 50, () => metricsServer.close());
  }

  // Identity: only the clusterset id matters to an importer; a change means restart.
  const identity = createClusterIdentityWatcher({
    source: kubeClusterPropertySource(kc, logger),
    flags: { clusterId: config.clusterId, clustersetId: config.clustersetId },
    logger,
    readiness,
  });
  await identity.start();
  shutdown.onShutdown('identity', 30, () => identity.stop());
  const { clustersetId, clusterId } = await new Promise<{
    clustersetId: string;
    clusterId: string;
  }>((resolve) => {
    const now = identity.current();
    if (now !== undefined) return resolve(now);
    const off = identity.onChange((next) => {
      if (next !== undefined) {
        off();
        resolve(next);
      }
    });
  });
  // The cluster id matters too: records claiming it are refused unless exported here.
  identity.onChange((next) => {
    if (next?.clustersetId !== clustersetId || next.clusterId !== clusterId) {
      logger.warn('cluster identity changed; restarting to import with the new one', {
        [logFields.clustersetId]: next?.clustersetId,
        [logFields.clusterId]: next?.clusterId,
      });
      void shutdown.shutdown('cluster identity changed').then(() => process.exit(1));
    }
  });

  const cloudMap = createCloudMapClient(
    createSdkCloudMapPort(
      createServiceDiscoveryClient({
        ...(config.region === undefined ? {} : { region: config.region }),
        ...(config.cloudMapEndpoint === undefined ? {} : { endpoint: config.cloudMapEndpoint }),
        ...(config.assumeRoleArn === undefined
          ? {}
          : {
              assumeRole: {
                roleArn: config.assumeRoleArn,
                sessionName: 'cloudmap-mcs-import-agent',
                ...(config.assumeRoleExternalId === undefined
                  ? {}
                  : { externalId: config.assumeRoleExternalId }),
              },
            }),
      }),
    ),
    // The poller decides when to read; caching under it would only delay changes.
    {
      logger,
      metrics: createCloudMapMetrics(registry),
      cacheTtlMs: { namespaces: 0, services: 0, instances: 0, discover: 0 },
    },
  );
  shutdown.onShutdown('cloud map client', 40, () => cloudMap.close());

  const metrics = createImportMetrics(registry);
  let controller: ImportController | undefined;
  const runController = async (): Promise<void> => {
    const keyOf = (obj: KubernetesObject): string | undefined => {
      const name = obj.metadata?.labels?.[LABEL_MCS_SERVICE_NAME];
      return name === undefined ? undefined : `${obj.metadata?.namespace ?? ''}/${name}`;
    };
    const informers = startImportInformers(
      kc,
      {
        services: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
        endpointSlices: `endpointslice.kubernetes.io/managed-by=${SLICE_MANAGED_BY}`,
      },
      {
        // Only appearing or going namespaces matter; updates would cost a slow round each.
        namespace: (event, obj) => {
          if (event !== 'update') controller?.namespaceChanged(obj.metadata?.name ?? '');
        },
        serviceImport: (_event, obj) =>
          controller?.enqueue(`${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`),
        // A local export appearing or going decides whether records of our own id import.
        serviceExport: (event, obj) => {
          if (event !== 'update')
            controller?.enqueue(`${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`);
        },
        service: (_event, obj) => {
          const key = keyOf(obj);
          if (key !== undefined) controller?.enqueue(key);
        },
        endpointSlice: (_event, obj) => {
          const key = keyOf(obj);
          if (key !== undefined) controller?.enqueue(key);
        },
      },
      logger,
    );
    shutdown.onShutdown('informers', 30, async () => {
      await Promise.all(Object.values(informers).map((i) => i.stop()));
    });
    readiness.set('caches', false, 'waiting for informer caches to sync');
    await Promise.all(Object.values(informers).map((i) => i.synced()));
    readiness.set('caches', true);
    // This cluster's Service CIDRs and node addresses are never imported: know them before
    // the first reconcile, then keep them current.
    const local = createLocalAddresses();
    const localWatch = createLocalAddressWatch({
      reader: createKubeLocalAddressReader(kc),
      local,
      extraServiceCidrs: config.localServiceCidrs,
      clock: realClock,
      logger,
      periodMs: config.localAddressesPeriodMs,
      onChange: () => controller?.enqueueAll(),
    });
    readiness.set('local-addresses', false, 'reading Service CIDRs and node addresses');
    for (;;) {
      try {
        await localWatch.refresh();
        break;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        readiness.set('local-addresses', false, `reading them failed: ${message.slice(0, 200)}`);
        logger.warn('reading local addresses failed; retrying', { [logFields.error]: error });
        await new Promise((r) => setTimeout(r, 5_000));
        if (shutdown.signal.aborted) return;
      }
    }
    readiness.set('local-addresses', true);
    localWatch.start();
    shutdown.onShutdown('local addresses', 30, () => localWatch.stop());
    // Non-Kubernetes Cloud Map services the users select (ADR 0014); off with --external-services=false.
    const external = config.externalServices
      ? startExternalImports({
          kc,
          cloudMap,
          trust: {
            clustersetId,
            localClusterId: clusterId,
            addresses: createAddressPolicy(config.allowedCidrs, local),
          },
          periodMs: config.externalPollMs,
          identity: config.identity,
          namespaces: config.namespaces,
          logger,
          controller: () => controller,
          shutdown,
          metrics,
        })
      : undefined;
    controller = createImportController({
      ...(external === undefined ? {} : { external }),
      cloudMap,
      sources: createKubeSources(informers),
      writer: createKubeWriter(kc),
      clock: realClock,
      logger,
      trust: {
        clustersetId,
        localClusterId: clusterId,
        addresses: createAddressPolicy(config.allowedCidrs, local),
      },
      periods: {
        slowMs: config.pollSlowMs,
        fastMs: config.pollFastMs,
        resyncMs: config.pollResyncMs,
        jitter: config.pollJitter,
        maxBackoffMs: config.pollMaxBackoffMs,
      },
      ...(config.requestBudgetPerSecond === undefined
        ? {}
        : { requestBudgetPerSecond: config.requestBudgetPerSecond }),
      heartbeatTtlMs: config.heartbeatTtlMs,
      workers: config.workers,
      now: () => Date.now(),
      maxEndpointsPerSlice: config.maxEndpointsPerSlice,
      namespaces: config.namespaces,
      caps: config.caps,
      metrics,
      events: createEventRecorder({
        sink: kubeEventSink(kc),
        controller: 'cloudmap-mcs.io/import-agent',
        instance: config.identity,
        logger,
      }),
    });
    const ctl = controller;
    readiness.add('cloud-map', () => {
      if (!ctl.poller.synced)
        return { ok: false, message: 'waiting for the first complete Cloud Map snapshot' };
      const h = ctl.poller.health();
      // Unreachable makes the Pod NotReady so operators see it (kubectl, alerts), while
      // liveness stays OK: nothing restarts and the imports stay at the last good state.
      return h.reachable ? { ok: true } : { ok: false, message: h.message };
    });
    shutdown.onShutdown('controller', 20, () => ctl.stop());
    await ctl.start();
    logger.info('import agent running', { [logFields.clustersetId]: clustersetId });
  };

  if (config.leaderElect) {
    readiness.set('leader', true, 'standby');
    const elector = createLeaderElector({
      store: createKubeLeaseStore(kc, config.leaseNamespace, config.leaseName),
      identity: config.identity,
      logger,
      onStartedLeading: () => {
        void runController().catch((error: unknown) => {
          logger.error('import controller failed', { [logFields.error]: error });
          void shutdown.shutdown('controller failed').then(() => process.exit(1));
        });
      },
      onStoppedLeading: () => {
        if (!shutdown.signal.aborted) {
          logger.warn('lost leadership; exiting so a fresh replica campaigns');
          void shutdown.shutdown('lost leadership').then(() => process.exit(1));
        }
      },
    });
    shutdown.onShutdown('leader election', 10, () => elector.stop());
    void elector.run(shutdown.signal);
  } else {
    await runController();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `import agent failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
