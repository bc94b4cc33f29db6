import {
  bindWatches,
  createAddressPolicy,
  createControllerMetrics,
  createEventHub,
  createLocalAddresses,
  logFields,
  sleep,
  type ClusterIdentity,
  type ControllerMetrics,
  type EventHub,
  type LocalAddresses,
} from '@cloudmap-mcs/core';
import type { AgentContext, AgentRun } from '@cloudmap-mcs/core/agent';
import { createEventRecorder, kubeEventSink, leaderOnly } from '@cloudmap-mcs/core/runtime';
import { pollPeriodsOf, type ImportAgentConfig } from './config.js';
import { createImportController, type ImportController } from './controller.js';
import { createImportInformers, type ImportInformers } from './kube/informers.js';
import { createKubeSources } from './kube/kube-sources.js';
import { createKubeWriter } from './kube/kube-writer.js';
import { createKubeLocalAddressReader, createLocalAddressWatch } from './kube/local-addresses.js';
import { startExternalImports } from './external/wire.js';
import { createImportMetrics } from './metrics.js';
import type { Poller } from './poller/poller.js';
import { createClusterFamilies, type ClusterFamilies } from './reconcile/families.js';
import { LABEL_MANAGED_BY, MANAGED_BY } from './reconcile/k8s-types.js';
import { SLICE_MANAGED_BY } from './reconcile/reconciler.js';
import { importWatches } from './watches.js';

type Ctx = AgentContext<ImportAgentConfig>;
interface Metrics {
  agent: ReturnType<typeof createImportMetrics>;
  controllers: ControllerMetrics;
}

/**
 * The import agent's own wiring on core's skeleton: it reads Cloud Map and writes
 * ServiceImports, derived Services and EndpointSlices; it never writes to Cloud Map. It waits
 * for a usable identity before campaigning for the Lease; once leading it starts informers,
 * reads this cluster's own addresses and runs the controller.
 */
export async function startImportAgent(ctx: Ctx): Promise<AgentRun> {
  const identity = await usableIdentity(ctx);
  // The data gauges and the controllers' families are in the leader registry: a standby
  // serves only counters, build_info and its leader status (core's agent-metrics.ts).
  const metrics: Metrics = {
    agent: createImportMetrics(ctx.registry, ctx.leaderRegistry),
    controllers: createControllerMetrics(ctx.leaderRegistry),
  };
  return { lead: (signal) => runImport(ctx, identity, metrics, signal) };
}

/** The first usable identity; a later change restarts the process (imports follow the id). */
async function usableIdentity(ctx: Ctx): Promise<ClusterIdentity> {
  const first = await new Promise<ClusterIdentity>((resolve) => {
    const now = ctx.identity.current();
    if (now !== undefined) return resolve(now);
    const off = ctx.identity.onChange((next) => {
      if (next === undefined) return;
      off();
      resolve(next);
    });
  });
  // The cluster id matters too: records claiming it are refused unless exported here.
  ctx.identity.onChange((next) => {
    if (next?.clustersetId === first.clustersetId && next.clusterId === first.clusterId) return;
    ctx.logger.warn('cluster identity changed; restarting to import with the new one', {
      [logFields.clustersetId]: next?.clustersetId,
      [logFields.clusterId]: next?.clusterId,
    });
    void ctx.shutdown.shutdown('cluster identity changed', 1);
  });
  return first;
}

async function runImport(
  ctx: Ctx,
  identity: ClusterIdentity,
  metrics: Metrics,
  signal: AbortSignal,
): Promise<void> {
  // In order: the caches, this cluster's addresses, the controller, then the watches
  // (watches.ts) that feed it. Events before that are dropped: the controller's start replays.
  const informers = await syncedInformers(ctx);
  const local = createLocalAddresses();
  const families = createClusterFamilies();
  const localChanges = createEventHub<undefined>();
  const onLocalChange = () => localChanges.emit('update', undefined);
  if (!(await readLocalAddresses(ctx, local, families, onLocalChange))) return;
  const externalChanges = createEventHub<string>();
  const ctl = createController(ctx, identity, metrics, informers, local, externalChanges, families);
  const unwatch = bindWatches(
    importWatches({ ...informers, localAddresses: localChanges, external: externalChanges }, ctl),
    ctl.enqueue,
    ctx.logger.child({ [logFields.component]: 'watches' }),
  );
  ctx.readiness.add('cloud-map', () => {
    if (!ctl.poller.synced)
      return { ok: false, message: 'waiting for the first complete Cloud Map snapshot' };
    const h = ctl.poller.health();
    // Unreachable makes the Pod NotReady so operators see it (kubectl, alerts), while
    // liveness stays OK: nothing restarts and the imports stay at the last good state.
    return h.reachable ? { ok: true } : { ok: false, message: h.message };
  });
  ctx.shutdown.onShutdown('controller', 20, () => {
    unwatch();
    return ctl.stop();
  });
  await ctl.start(signal);
  ctx.logger.info('import agent running', { [logFields.clustersetId]: identity.clustersetId });
}

/** The caches, synced (workers start only then, docs/contributing.md#reconcile-shape). */
async function syncedInformers(ctx: Ctx): Promise<ImportInformers> {
  const informers = createImportInformers(
    ctx.kubeConfig,
    {
      services: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
      endpointSlices: `endpointslice.kubernetes.io/managed-by=${SLICE_MANAGED_BY}`,
    },
    ctx.logger,
  );
  for (const i of Object.values(informers)) i.start();
  ctx.shutdown.onShutdown('informers', 30, async () => {
    await Promise.all(Object.values(informers).map((i) => i.stop()));
  });
  ctx.readiness.set('caches', false, 'waiting for informer caches to sync');
  await Promise.all(Object.values(informers).map((i) => i.synced()));
  ctx.readiness.set('caches', true);
  return informers;
}

/**
 * This cluster's Service CIDRs and node addresses are never imported, and its Service IP
 * families decide the derived Services' (reconcile/families.ts): known before the first
 * reconcile, then kept current. False when shutdown began while retrying.
 */
async function readLocalAddresses(
  ctx: Ctx,
  local: LocalAddresses,
  families: ClusterFamilies,
  onChange: () => void,
): Promise<boolean> {
  const watch = createLocalAddressWatch({
    reader: createKubeLocalAddressReader(ctx.kubeConfig),
    local,
    families,
    extraServiceCidrs: ctx.config.localServiceCidrs,
    clock: ctx.clock,
    logger: ctx.logger,
    periodMs: ctx.config.localAddressesPeriodMs,
    onChange,
  });
  ctx.readiness.set('local-addresses', false, 'reading Service CIDRs and node addresses');
  for (;;) {
    try {
      await watch.refresh();
      break;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      ctx.readiness.set('local-addresses', false, `reading them failed: ${message.slice(0, 200)}`);
      ctx.logger.warn('reading local addresses failed; retrying', { [logFields.error]: error });
      const stopped = await sleep(ctx.clock, 5_000, ctx.shutdown.signal).then(
        () => false,
        () => true,
      );
      if (stopped) return false;
    }
  }
  ctx.readiness.set('local-addresses', true);
  watch.start();
  ctx.shutdown.onShutdown('local addresses', 30, () => watch.stop());
  return true;
}

function createController(
  ctx: Ctx,
  identity: ClusterIdentity,
  metrics: Metrics,
  informers: ImportInformers,
  local: LocalAddresses,
  externalChanges: EventHub<string>,
  families: ClusterFamilies,
): ImportController {
  const { config } = ctx;
  const trust = {
    clustersetId: identity.clustersetId,
    localClusterId: identity.clusterId,
    addresses: createAddressPolicy(config.allowedCidrs, local),
  };
  const events = createEventRecorder({
    sink: kubeEventSink(ctx.kubeConfig),
    controller: 'cloudmap-mcs.io/import-agent',
    instance: config.identity,
    logger: ctx.logger,
  });
  // Non-Kubernetes Cloud Map services the users select (ADR 0014): RBAC on CloudMapServiceImport
  // decides who may select one; without the CRD this stays idle.
  const external = (snapshot: Pick<Poller, 'get'>) =>
    startExternalImports({
      kc: ctx.kubeConfig,
      cloudMap: ctx.cloudMap,
      trust,
      periodMs: config.externalPollMs,
      events,
      namespaces: config.namespaces,
      logger: ctx.logger,
      snapshot,
      onChange: (key) => externalChanges.emit('update', key),
      shutdown: ctx.shutdown,
      metrics: metrics.agent,
      controllerMetrics: metrics.controllers,
    });
  return createImportController({
    external,
    cloudMap: ctx.cloudMap,
    sources: createKubeSources(informers),
    // No Kubernetes write once another replica may lead (ADR 0020).
    writer: leaderOnly(createKubeWriter(ctx.kubeConfig), ctx.leading),
    clock: ctx.clock,
    logger: ctx.logger,
    trust,
    periods: pollPeriodsOf(config),
    requestBudgetPerSecond: config.requestBudgetPerSecond,
    heartbeatTtlMs: config.heartbeatTtlMs,
    clusterFamilies: () => families.get(),
    workers: config.workers,
    now: () => Date.now(),
    namespaces: config.namespaces,
    caps: config.caps,
    metrics: metrics.agent,
    controllerMetrics: metrics.controllers,
    events,
  });
}
